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

// pen is a Pen packed in 63 bits, as the emulator keeps it: the
// foreground colour in bits 0–25, the background in 26–51 (a Color's kind
// and value), the attributes in 52–59 and the underline style in 60–62.
// The zero pen is the default one. Colour output sets pens over and over,
// and a word is cheap to build, compare and look up.
type pen uint64

const (
	colorBits = 26
	bgShift   = colorBits
	attrShift = 2 * colorBits
	ulShift   = attrShift + 8
	colorMask = 1<<colorBits - 1
	bgMask    = pen(colorMask) << bgShift
	ulMask    = pen(7) << ulShift
)

// The attribute bits, from attrShift.
const (
	penBold pen = 1 << (attrShift + iota)
	penDim
	penItalic
	penBlink
	penReverse
	penInvisible
	penStrike
	penOverline
)

func (p pen) fg() Color { return Color(p & colorMask) }
func (p pen) bg() Color { return Color(p >> bgShift & colorMask) }

func (p pen) withFg(c Color) pen { return p&^colorMask | pen(c) }
func (p pen) withBg(c Color) pen { return p&^bgMask | pen(c)<<bgShift }

func (p pen) withUnderline(u Underline) pen { return p&^ulMask | pen(u)<<ulShift }

// set turns attribute bits a on or off.
func (p pen) set(a pen, on bool) pen {
	if on {
		return p | a
	}
	return p &^ a
}

// Pen unpacks p.
func (p pen) Pen() Pen {
	return Pen{
		Fg: p.fg(), Bg: p.bg(), Underline: Underline(p >> ulShift & 7),
		Bold: p&penBold != 0, Dim: p&penDim != 0, Italic: p&penItalic != 0, Blink: p&penBlink != 0,
		Reverse: p&penReverse != 0, Invisible: p&penInvisible != 0, Strike: p&penStrike != 0,
		Overline: p&penOverline != 0,
	}
}

// maxPens bounds the pen table (a cell's index is a uint16). A variable
// so that a test can reach the bound.
var maxPens = 1<<16 - 1

// penTable interns the distinct pens the screens use; index 0 is the
// default pen. An emulator has none until a program sets another pen.
type penTable struct {
	pens []pen
	ix   map[pen]uint16
	// cache holds pens interned lately, by a hash of the pen, so that
	// colour output, which sets a few pens over and over, seldom looks
	// in the map.
	cache   [16]pen
	cacheIx [16]uint16
	// debt counts the pens left undrawn (given the default pen) before
	// the table may be compacted again, after a compaction found it
	// nearly full of pens in use.
	debt int
}

func newPenTable() *penTable {
	return &penTable{pens: []pen{0}, ix: map[pen]uint16{}}
}

// add appends p, which is not in the table; false when it is full.
func (t *penTable) add(p pen) (uint16, bool) {
	if len(t.pens) >= maxPens {
		return 0, false
	}
	i := uint16(len(t.pens))
	t.pens = append(t.pens, p)
	t.ix[p] = i
	return i, true
}

// penOf returns the pen of index i.
func (e *Emulator) penOf(i uint16) Pen {
	if i == 0 {
		return Pen{}
	}
	return e.pens.pens[i].Pen()
}

// intern returns the index of p, adding it to the table. A full table is
// compacted to the pens the screens still use; when even that leaves it
// nearly full (a huge screen of distinct colours), new pens draw as the
// default one for a while rather than compacting again on every cell.
func (e *Emulator) intern(p pen) uint16 {
	if p == 0 {
		return 0
	}
	if e.pens == nil {
		e.pens = newPenTable()
	}
	t := e.pens
	h := (p ^ p>>bgShift ^ p>>attrShift ^ p>>ulShift) & 15
	if t.cache[h] == p {
		return t.cacheIx[h]
	}
	i, ok := t.ix[p]
	if !ok {
		i, ok = t.add(p)
	}
	if !ok {
		if t.debt > 0 {
			t.debt--
			return 0
		}
		e.compactPens()
		t = e.pens
		if len(t.pens) > maxPens-maxPens/8 {
			t.debt = maxPens / 8
		}
		i, _ = t.add(p)
	}
	t.cache[h], t.cacheIx[h] = p, i
	return i
}

// compactPens rebuilds the pen table from the pens the screens' cells and
// the current pen use, renumbering the cells.
func (e *Emulator) compactPens() {
	old := e.pens.pens
	e.pens = newPenTable()
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
	e.setPen(e.pen)
}

// dropPens frees the pen table when no cell uses a pen, so that a
// session goes back to costing what an idle one does when a full-screen
// program in colour ends.
func (e *Emulator) dropPens() {
	if e.pens == nil || e.alt != nil {
		return
	}
	for k := range e.main.lines {
		if len(e.main.lines[k].attrs) > 0 {
			return
		}
	}
	e.pens = nil
	e.setPen(e.pen)
}

// setPen makes p the current pen, with the pen erased cells get: the
// background colour alone, as tmux and xterm erase.
func (e *Emulator) setPen(p pen) {
	e.pen = p
	e.penIx = e.intern(p)
	e.bgIx = 0
	if p&bgMask != 0 {
		e.bgIx = e.intern(p & bgMask)
	}
}

// sgr is SGR (CSI ... m): each parameter changes the pen; ':' joins
// sub-parameters to the one before (38:2::r:g:b, 4:3).
func (e *Emulator) sgr(int) {
	p := e.pen
	if e.np == 0 {
		p = 0
	}
	for i := 0; i < e.np; {
		p, i = e.sgrParam(p, i)
	}
	if p != e.pen {
		e.setPen(p)
	}
}

// sub reports whether parameter i is a sub-parameter (came after ':').
func (ps *parser) sub(i int) bool { return i < maxParams && ps.subs&(1<<i) != 0 }

// sgrParam applies parameter i to p and returns it with the index of the
// next parameter: the attributes (bold, underline, ...) in sgrAttribute,
// the colours in sgrColor, each a switch on values, which compiles to a
// jump table: colour output sends an SGR every few characters.
func (e *Emulator) sgrParam(p pen, i int) (pen, int) {
	n := e.params[i]
	next := i + 1
	for next < e.np && e.sub(next) && n != 38 && n != 48 && n != 58 {
		next++ // sub-parameters of an attribute that takes none are ignored
	}
	switch {
	case n == 38 || n == 48 || n == 58:
		c, next := e.extendedColor(i)
		switch n {
		case 38:
			p = p.withFg(c)
		case 48:
			p = p.withBg(c)
		} // 58, the underline colour, is not kept
		return p, next
	case n < 30 || n == 53 || n == 55:
		return e.sgrAttribute(p, i), next
	}
	return sgrColor(p, n), next
}

// sgrAttribute applies the attribute of parameter i (0-29, 53, 55) to p;
// 4 reads its style from the sub-parameter after it (4:3 is curly).
func (e *Emulator) sgrAttribute(p pen, i int) pen {
	switch e.params[i] {
	case 0:
		p = 0
	case 1:
		p |= penBold
	case 2:
		p |= penDim
	case 3:
		p |= penItalic
	case 4:
		u := UnderlineSingle
		if i+1 < e.np && e.sub(i+1) && e.params[i+1] <= int(UnderlineDashed) {
			u = Underline(e.params[i+1])
		}
		p = p.withUnderline(u)
	case 5, 6:
		p |= penBlink
	case 7:
		p |= penReverse
	case 8:
		p |= penInvisible
	case 9:
		p |= penStrike
	case 21:
		p = p.withUnderline(UnderlineDouble)
	case 22:
		p &^= penBold | penDim
	case 23:
		p &^= penItalic
	case 24:
		p = p.withUnderline(UnderlineNone)
	case 25:
		p &^= penBlink
	case 27:
		p &^= penReverse
	case 28:
		p &^= penInvisible
	case 29:
		p &^= penStrike
	case 53:
		p |= penOverline
	case 55:
		p &^= penOverline
	}
	return p
}

// sgrColor applies the 16-colour parameter n (30-49, 90-107) to p.
func sgrColor(p pen, n int) pen {
	switch n {
	case 30, 31, 32, 33, 34, 35, 36, 37:
		p = p.withFg(ANSIColor(uint8(n - 30)))
	case 39:
		p = p.withFg(DefaultColor)
	case 40, 41, 42, 43, 44, 45, 46, 47:
		p = p.withBg(ANSIColor(uint8(n - 40)))
	case 49:
		p = p.withBg(DefaultColor)
	case 90, 91, 92, 93, 94, 95, 96, 97:
		p = p.withFg(ANSIColor(uint8(n - 90 + 8)))
	case 100, 101, 102, 103, 104, 105, 106, 107:
		p = p.withBg(ANSIColor(uint8(n - 100 + 8)))
	}
	return p
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
