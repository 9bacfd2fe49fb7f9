package vt

// The pen in a picture: each change written as the shorter of the SGR
// that changes the current pen and a reset followed by the new one.

import (
	"strconv"
	"strings"
)

// setPen changes the output's pen to p with the shorter of the changes
// from the current one and a reset followed by p.
func (r *renderer) setPen(p Pen) {
	if p == r.pen {
		return
	}
	old := r.pen
	r.pen = p
	if p == (Pen{}) {
		r.csi("", 'm')
		return
	}
	diff := penChange(old, p)
	if full := append([]string{"0"}, penChange(Pen{}, p)...); paramLen(full) < paramLen(diff) {
		diff = full
	}
	// A terminal keeps 16 parameters of a sequence (this one does, and
	// xterm.js 32): a long change goes in several.
	n := 0
	for i, g := range diff {
		k := strings.Count(g, ";") + strings.Count(g, ":") + 1
		switch {
		case i == 0:
			r.b = append(r.b, "\x1b["...)
		case n+k > maxParams:
			r.b = append(r.b, "m\x1b["...)
			n = 0
		default:
			r.b = append(r.b, ';')
		}
		r.b = append(r.b, g...)
		n += k
	}
	r.b = append(r.b, 'm')
}

// paramLen returns the bytes the groups of parameters take.
func paramLen(groups []string) int {
	n := 0
	for _, g := range groups {
		n += len(g) + 1
	}
	return n
}

// penChange returns the SGR parameters that change pen from to pen to,
// in groups that must stay in one sequence (a colour's parameters).
func penChange(from, to Pen) (b []string) {
	add := func(s string) { b = append(b, s) }
	if from.Bold && !to.Bold || from.Dim && !to.Dim {
		add("22") // turns both off
		from.Bold, from.Dim = false, false
	}
	for _, a := range [...]struct {
		from, to bool
		on, off  string
	}{
		{from.Bold, to.Bold, "1", "22"},
		{from.Dim, to.Dim, "2", "22"},
		{from.Italic, to.Italic, "3", "23"},
		{from.Blink, to.Blink, "5", "25"},
		{from.Reverse, to.Reverse, "7", "27"},
		{from.Invisible, to.Invisible, "8", "28"},
		{from.Strike, to.Strike, "9", "29"},
		{from.Overline, to.Overline, "53", "55"},
	} {
		switch {
		case a.to && !a.from:
			add(a.on)
		case a.from && !a.to:
			add(a.off)
		}
	}
	if from.Underline != to.Underline {
		switch to.Underline {
		case UnderlineNone:
			add("24")
		case UnderlineSingle:
			add("4")
		default:
			add("4:" + strconv.Itoa(int(to.Underline)))
		}
	}
	if from.Fg != to.Fg {
		add(colorParams(to.Fg, 30, 90, "38"))
	}
	if from.Bg != to.Bg {
		add(colorParams(to.Bg, 40, 100, "48"))
	}
	return b
}

// colorParams returns the SGR parameters that set c: base+n for the ANSI
// colours (bright+n-8 for the bright ones), base+9 for the default.
func colorParams(c Color, base, bright int, ext string) string {
	switch c.Kind() {
	case ColorANSI:
		if n := int(c.Index()); n >= 8 {
			return strconv.Itoa(bright + n - 8)
		}
		return strconv.Itoa(base + int(c.Index()))
	case ColorPalette:
		return ext + ";5;" + strconv.Itoa(int(c.Index()))
	case ColorRGB:
		cr, cg, cb := c.RGB()
		return ext + ";2;" + strconv.Itoa(int(cr)) + ";" + strconv.Itoa(int(cg)) + ";" + strconv.Itoa(int(cb))
	}
	return strconv.Itoa(base + 9)
}
