package vt

// This file is what a cell is drawn with (its pen: colours and
// attributes), the SGR sequence that sets it, and the table the screens'
// pens are interned in, so that a cell costs two bytes for them and a row
// that never had a non-default pen costs nothing.

// Color is a foreground or background colour: the terminal's default, one
// of the 16 ANSI colours (SGR 30–37, 90–97), one of the 256 palette
// colours (38;5;n) or a 24-bit colour (38;2;r;g;b). ANSI and palette
// colours with the same index are kept apart, as tmux and xterm.js keep
// them: some terminals draw bold text in the bright ANSI colour.
type Color uint32

// ColorKind says which kind of colour a Color is.
type ColorKind uint8

// The kinds of colour.
const (
	ColorDefault ColorKind = iota
	ColorANSI
	ColorPalette
	ColorRGB
)

// DefaultColor is the terminal's default colour.
const DefaultColor Color = 0

// ANSIColor returns ANSI colour n (0–7 normal, 8–15 bright); n is taken
// modulo 16.
func ANSIColor(n uint8) Color { return Color(ColorANSI)<<24 | Color(n&15) }

// PaletteColor returns colour n of the 256-colour palette.
func PaletteColor(n uint8) Color { return Color(ColorPalette)<<24 | Color(n) }

// RGBColor returns a 24-bit colour.
func RGBColor(r, g, b uint8) Color {
	return Color(ColorRGB)<<24 | Color(r)<<16 | Color(g)<<8 | Color(b)
}

// Kind returns the kind of colour c is.
func (c Color) Kind() ColorKind { return ColorKind(c >> 24) }

// Index returns the index of an ANSI or palette colour.
func (c Color) Index() uint8 { return uint8(c) }

// RGB returns the components of a 24-bit colour.
func (c Color) RGB() (r, g, b uint8) { return uint8(c >> 16), uint8(c >> 8), uint8(c) }

// Underline is the underline style (SGR 4 and 4:n).
type Underline uint8

// The underline styles, numbered as in SGR 4:n.
const (
	UnderlineNone Underline = iota
	UnderlineSingle
	UnderlineDouble
	UnderlineCurly
	UnderlineDotted
	UnderlineDashed
)

// Pen is what a cell is drawn with. The zero Pen is the terminal's
// default. It is comparable: equal pens draw alike.
type Pen struct {
	Fg, Bg    Color
	Underline Underline
	Bold      bool
	Dim       bool
	Italic    bool
	Blink     bool
	Reverse   bool
	Invisible bool
	Strike    bool
	Overline  bool
}

// maxPens bounds the pen table (a cell's index is a uint16). A variable
// so that a test can reach the bound.
var maxPens = 1<<16 - 1

// penTable interns the distinct pens the screens use: index 0 is the
// default pen, and both stay nil until a program sets another.
type penTable struct {
	pens []Pen
	ix   map[Pen]uint16
	// debt counts the pens left undrawn (given the default pen) before
	// the table may be compacted again, after a compaction found it
	// nearly full of pens in use.
	debt int
}

// lookup returns p's index if p is in the table.
func (t *penTable) lookup(p Pen) (uint16, bool) {
	if p == (Pen{}) {
		return 0, true
	}
	i, ok := t.ix[p]
	return i, ok
}

// add appends p, which is not in the table; false when it is full.
func (t *penTable) add(p Pen) (uint16, bool) {
	if t.pens == nil {
		t.pens = []Pen{{}}
		t.ix = map[Pen]uint16{}
	}
	if len(t.pens) >= maxPens {
		return 0, false
	}
	i := uint16(len(t.pens))
	t.pens = append(t.pens, p)
	t.ix[p] = i
	return i, true
}

// pen returns the pen of index i.
func (t *penTable) pen(i uint16) Pen {
	if i == 0 {
		return Pen{}
	}
	return t.pens[i]
}

// intern returns the index of p, adding it to the table. A full table is
// compacted to the pens the screens still use; when even that leaves it
// nearly full (a huge screen of distinct colours), new pens draw as the
// default one for a while rather than compacting again on every cell.
func (e *Emulator) intern(p Pen) uint16 {
	t := &e.pens
	if i, ok := t.lookup(p); ok {
		return i
	}
	if i, ok := t.add(p); ok {
		return i
	}
	if t.debt > 0 {
		t.debt--
		return 0
	}
	e.compactPens()
	if len(t.pens) > maxPens-maxPens/8 {
		t.debt = maxPens / 8
	}
	i, _ := t.add(p)
	return i
}

// compactPens rebuilds the pen table from the pens the screens' cells and
// the current pen use, renumbering the cells.
func (e *Emulator) compactPens() {
	old := e.pens.pens
	e.pens = penTable{}
	remap := make(map[uint16]uint16)
	renumber := func(s *screen) {
		for k := range s.lines {
			a := s.lines[k].attrs
			for x, i := range a {
				if i == 0 {
					continue
				}
				j, ok := remap[i]
				if !ok {
					j, _ = e.pens.add(old[i])
					remap[i] = j
				}
				a[x] = j
			}
		}
	}
	renumber(&e.main)
	if e.alt != nil {
		renumber(e.alt)
	}
	e.penIx, _ = e.pens.add(e.pen)
	e.setPen(e.pen)
}

// setPen makes p the current pen, with the pen erased cells get: the
// background colour alone, as tmux and xterm erase.
func (e *Emulator) setPen(p Pen) {
	e.pen = p
	e.penIx = e.intern(p)
	e.bgIx = 0
	if p.Bg != DefaultColor {
		e.bgIx = e.intern(Pen{Bg: p.Bg})
	}
}

// sgr is SGR (CSI ... m): each parameter changes the pen; ':' joins
// sub-parameters to the one before (38:2::r:g:b, 4:3).
func (e *Emulator) sgr(int) {
	p := e.pen
	if e.np == 0 {
		p = Pen{}
	}
	for i := 0; i < e.np; {
		i = e.sgrParam(&p, i)
	}
	if p != e.pen {
		e.setPen(p)
	}
}

// sub reports whether parameter i is a sub-parameter (came after ':').
func (ps *parser) sub(i int) bool { return i < maxParams && ps.subs&(1<<i) != 0 }

// sgrParam applies parameter i and returns the index of the next one.
func (e *Emulator) sgrParam(p *Pen, i int) int {
	n := e.params[i]
	next := i + 1
	for next < e.np && e.sub(next) && n != 38 && n != 48 && n != 58 {
		next++ // sub-parameters of an attribute that takes none are ignored
	}
	switch {
	case n == 0:
		*p = Pen{}
	case n == 1:
		p.Bold = true
	case n == 2:
		p.Dim = true
	case n == 3:
		p.Italic = true
	case n == 4:
		p.Underline = UnderlineSingle
		if i+1 < e.np && e.sub(i+1) {
			if s := e.params[i+1]; s <= int(UnderlineDashed) {
				p.Underline = Underline(s)
			}
		}
	case n == 5 || n == 6:
		p.Blink = true
	case n == 7:
		p.Reverse = true
	case n == 8:
		p.Invisible = true
	case n == 9:
		p.Strike = true
	case n == 21:
		p.Underline = UnderlineDouble
	case n == 22:
		p.Bold, p.Dim = false, false
	case n == 23:
		p.Italic = false
	case n == 24:
		p.Underline = UnderlineNone
	case n == 25:
		p.Blink = false
	case n == 27:
		p.Reverse = false
	case n == 28:
		p.Invisible = false
	case n == 29:
		p.Strike = false
	case n >= 30 && n <= 37:
		p.Fg = ANSIColor(uint8(n - 30))
	case n == 38, n == 48, n == 58:
		var c Color
		c, next = e.extendedColor(i)
		switch n {
		case 38:
			p.Fg = c
		case 48:
			p.Bg = c
		} // 58, the underline colour, is not kept
	case n == 39:
		p.Fg = DefaultColor
	case n >= 40 && n <= 47:
		p.Bg = ANSIColor(uint8(n - 40))
	case n == 49:
		p.Bg = DefaultColor
	case n == 53:
		p.Overline = true
	case n == 55:
		p.Overline = false
	case n >= 90 && n <= 97:
		p.Fg = ANSIColor(uint8(n - 90 + 8))
	case n >= 100 && n <= 107:
		p.Bg = ANSIColor(uint8(n - 100 + 8))
	}
	return next
}

// extendedColor reads the colour of 38, 48 or 58 at parameter i, in the
// ';' form (38;5;n, 38;2;r;g;b) or the ':' form (38:5:n, 38:2::r:g:b with
// its colour space, 38:2:r:g:b without), and returns it with the index of
// the parameter after it. A malformed one gives the default colour.
func (e *Emulator) extendedColor(i int) (Color, int) {
	if i+1 >= e.np {
		return DefaultColor, e.np
	}
	colon := e.sub(i + 1)
	end := i + 1 // the last parameter of the colour
	if colon {
		for end+1 < e.np && e.sub(end+1) {
			end++
		}
	}
	v := func(k int) uint8 { return uint8(min(e.params[k], 255)) }
	switch e.params[i+1] {
	case 5:
		if !colon {
			end = i + 2
		}
		if i+2 >= e.np || end < i+2 {
			return DefaultColor, min(end+1, e.np)
		}
		return PaletteColor(v(i + 2)), end + 1
	case 2:
		first := i + 2 // r
		if !colon {
			end = i + 4
		} else if end-i-1 >= 4 {
			first = i + 3 // a colour space before r
		}
		if first+2 > end || first+2 >= e.np {
			return DefaultColor, min(end+1, e.np)
		}
		return RGBColor(v(first), v(first+1), v(first+2)), end + 1
	}
	if !colon {
		end = i + 1
	}
	return DefaultColor, end + 1
}
