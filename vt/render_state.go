package vt

// The state a picture leaves besides the cells: the alternate screen, the
// cursor DECSC saved, the character sets, tab stops, the cursor and the
// modes, drawn after the screen so that what follows draws as it would.

import (
	"strconv"
)

// alternate enters the alternate screen from the main screen's cursor
// row and draws it. The cursor mode 1049 saved for the program's return
// is saved by 1049 again; when the program entered with 1047 after an
// earlier 1049, from another row, 1049 saves it and 1047 enters.
func (r *renderer) alternate() {
	e := r.e
	c := e.altSaved
	if c.set {
		r.jump(min(c.x, e.cols-1), min(c.y, e.rows-1))
		r.setPen(c.pen.Pen())
		r.csi("?1049", 'h')
		if c.y == e.altFrom {
			r.screen(e.alt, nil)
			return
		}
		r.csi("?1047", 'l')
	}
	r.jump(0, e.altFrom)
	r.csi("?1047", 'h')
	r.screen(e.alt, nil)
}

// savedCursor sets what DECSC saved: position, pen, origin mode and
// character sets, saved again by DECSC.
func (r *renderer) savedCursor() {
	c := r.e.saved
	if !c.set {
		return
	}
	if c.origin {
		r.csi("?6", 'h') // homes the cursor; the region is the screen still
		r.x, r.y = 0, 0
	}
	r.jump(min(c.x, r.e.cols-1), min(c.y, r.e.rows-1))
	r.setPen(c.pen.Pen())
	ascii := c.g == [2]charset{} && c.gl == 0
	if !ascii {
		r.charsets(c.g, c.gl)
	}
	r.b = append(r.b, "\x1b7"...)
	if !ascii {
		r.charsets([2]charset{}, 0)
	}
	if c.origin {
		r.csi("?6", 'l')
		r.x, r.y = 0, 0
	}
}

// charsets designates g into G0 and G1 and invokes gl, from the state
// they are in: ASCII in both, G0 invoked, or as savedCursor left them.
func (r *renderer) charsets(g [2]charset, gl int) {
	for i, final := range [2]byte{'(', ')'} {
		set := byte('B')
		if g[i] == charsetGraphics {
			set = '0'
		}
		r.b = append(r.b, esc, final, set)
	}
	r.b = append(r.b, 0x0f-byte(gl)) // SI, or SO for G1
}

// tabStops sets the tab stops when a program changed them.
func (r *renderer) tabStops() {
	e := r.e
	if e.tabs == nil {
		return
	}
	r.csi("3", 'g')
	for x, on := range e.tabs {
		if on {
			r.jump(x, r.y)
			r.b = append(r.b, "\x1bH"...)
		}
	}
}

// cursor sets origin mode and the scroll region (each homes the cursor)
// and places the cursor: at the pending-wrap position, the last cell is
// drawn again to get there. In origin mode the cursor may stand outside
// the region, where only relative moves from the home reach.
func (r *renderer) cursor() {
	e := r.e
	origin := e.modes&modeOrigin != 0
	if origin {
		r.csi("?6", 'h')
	}
	if e.top != 0 || e.bot != e.rows-1 {
		r.csi(strconv.Itoa(e.top+1)+";"+strconv.Itoa(e.bot+1), 'r')
	}
	l := e.scr.line(e.y)
	x, y := e.x, e.y
	if x == e.cols {
		x--
		if x < len(l.cells) && l.cells[x] == tail && x > 0 {
			x--
		}
	}
	switch {
	case !origin:
		r.csi(strconv.Itoa(y+1)+";"+strconv.Itoa(x+1), 'H')
	case y >= e.top && y <= e.bot:
		r.csi(strconv.Itoa(y-e.top+1)+";"+strconv.Itoa(x+1), 'H')
	default:
		if y > 0 {
			r.csi(strconv.Itoa(y), 'B')
		}
		r.csi(strconv.Itoa(x+1), 'G')
	}
	r.x, r.y = x, y
	if e.x == e.cols {
		r.drawCell(l, x)
	}
}

// modes sets the modes that differ from a new terminal's.
func (r *renderer) modes() {
	e := r.e
	for _, m := range [...]struct {
		m   mode
		on  bool // the sequence sets the mode, else it resets it
		seq string
	}{
		{modeAppCursor, true, "\x1b[?1h"},
		{modeAppKeypad, true, "\x1b="},
		{modeBracketedPaste, true, "\x1b[?2004h"},
		{modeFocus, true, "\x1b[?1004h"},
		{modeBlink, true, "\x1b[?12h"},
		{modeReverse, true, "\x1b[?5h"},
		{modeAltScroll, true, "\x1b[?1007h"},
		{modeLNM, true, "\x1b[20h"},
		{modeInsert, true, "\x1b[4h"},
		{modeAutowrap, false, "\x1b[?7l"},
		{modeCursorVisible, false, "\x1b[?25l"},
	} {
		if (e.modes&m.m != 0) == m.on {
			r.b = append(r.b, m.seq...)
		}
	}
	for _, group := range [...]mode{mouseTracking, mouseEncoding} {
		if n := modeNumber(e.modes & group); n != 0 {
			r.csi("?"+strconv.Itoa(n), 'h')
		}
	}
	if e.shape != 0 {
		r.csi(strconv.Itoa(int(e.shape))+" ", 'q')
	}
	if e.g != [2]charset{} || e.gl != 0 {
		r.charsets(e.g, e.gl)
	}
}
