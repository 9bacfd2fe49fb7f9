package vt

// This file and its neighbours are what a program's output does to the
// grid (grid.go), as tmux's screen-write.c does it: here writing
// characters, the saved cursor, the alternate screen and resets; moving
// the cursor and tab stops in motion.go, scrolling in scroll.go,
// inserting, deleting and erasing in erase.go.

// cursor is what DECSC saves.
type cursor struct {
	x, y   int // x may be the pending-wrap column
	pen    pen
	origin bool
	g      [2]charset
	gl     int
	set    bool
}

type charset uint8

const (
	charsetASCII charset = iota
	charsetGraphics
)

// decGraphics maps 0x60–0x7E in the DEC special graphics set to the
// characters xterm and tmux draw for them.
var decGraphics = [...]rune{
	'◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺',
	'⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
}

func (e *Emulator) cur() *line { return e.scr.line(e.y) }

// printASCII writes a run of printable ASCII.
func (e *Emulator) printASCII(b []byte) {
	if e.g[e.gl] != charsetASCII || e.modes&(modeInsert) != 0 || e.modes&modeAutowrap == 0 {
		for _, c := range b {
			e.print(rune(c))
		}
		e.last = b[len(b)-1]
		return
	}
	for len(b) > 0 {
		if e.x >= e.cols {
			e.wrap()
		}
		n := min(len(b), e.cols-e.x)
		l := e.cur()
		l.grow(e.x+n, e.cols)
		l.fixRun(e.x, e.x+n)
		cells := l.cells[e.x : e.x+n]
		for i, c := range b[:n] {
			cells[i] = rune(c)
		}
		if e.penIx != 0 || e.x < len(l.attrs) {
			l.setPen(e.x, e.x+n, e.penIx)
		}
		if l.marks != nil {
			l.unmarkRange(e.x, e.x+n)
		}
		e.x += n
		e.last = b[n-1]
		b = b[n:]
	}
}

// print writes one character.
func (e *Emulator) print(r rune) {
	e.last = 0
	if r < 0x80 && e.g[e.gl] == charsetGraphics && r >= 0x60 && r < 0x7f {
		r = decGraphics[r-0x60]
	}
	w := runeWidth(r)
	switch w {
	case -1:
		return
	case 0:
		e.combine(r)
		return
	}
	wrap := e.modes&modeAutowrap != 0
	if !wrap && e.x > e.cols-w {
		// Without autowrap a character that does not fit is dropped, as
		// tmux does: a wide one at the last column, or any at the
		// pending-wrap column autowrap was turned off at.
		return
	}
	if e.modes&modeInsert != 0 {
		e.insertBlanks(w)
	}
	if e.x > e.cols-w {
		e.wrap()
	}
	l := e.cur()
	if r == ' ' && e.x >= len(l.cells) && e.modes&modeInsert == 0 && e.penIx == 0 {
		// tmux does not store a space where nothing was written (outside
		// its fast path for plain text with autowrap) when it reads as
		// what is there, so the row does not count as used that far; see
		// appendRow.
	} else {
		l.fixCell(e.x, w)
		l.grow(e.x+w, e.cols)
		l.cells[e.x] = r
		l.unmark(e.x)
		if w == 2 {
			l.cells[e.x+1] = tail
			l.unmark(e.x + 1)
		}
		if e.penIx != 0 || e.x < len(l.attrs) {
			l.setPen(e.x, e.x+w, e.penIx)
		}
	}
	// Without autowrap the cursor sticks on the last column, and the next
	// character replaces the one there.
	if !wrap && e.x+w > e.cols-1 {
		e.x = e.cols - 1
	} else {
		e.x += w
	}
}

// wrap moves the cursor to the start of the next row for a character
// that does not fit, marking the row wrapped. A scroll it causes fills
// the new row with the default background, as in tmux (a line feed fills
// it with the current one).
func (e *Emulator) wrap() {
	e.cur().wrapped = true
	bg := e.bgIx
	e.bgIx = 0
	e.index()
	e.bgIx = bg
	e.x = 0
}

// combine attaches a zero-width character to the one before the cursor.
func (e *Emulator) combine(r rune) {
	x := min(e.x, e.cols) - 1
	l := e.cur()
	if x >= 0 && x < len(l.cells) && l.cells[x] == tail {
		x--
	}
	if x < 0 || x >= len(l.cells) || l.cells[x] == blank {
		return
	}
	if l.marks == nil {
		l.marks = make(map[int]string)
	}
	if m := l.marks[x]; len(m)+4 <= maxMarks {
		l.marks[x] = m + string(r)
	}
}

// repeat is REP: the character just printed again, n times, at most to
// the end of the line. As in tmux, only a printable ASCII character right
// before the sequence repeats.
func (e *Emulator) repeat(n int, last byte) {
	if last == 0 {
		return
	}
	n = min(n, e.cols-e.x)
	for range n {
		e.print(rune(last))
	}
}

// Saved cursor and screens.

// saveCursor is DECSC. As in tmux, there is one saved cursor for both
// screens, apart from the one the alternate screen saves (mode 1049).
func (e *Emulator) saveCursor() {
	e.saved = cursor{x: e.x, y: e.y, pen: e.pen, origin: e.modes&modeOrigin != 0, g: e.g, gl: e.gl, set: true}
}

func (e *Emulator) restoreCursor() {
	c := e.saved
	if !c.set {
		c = cursor{}
	}
	e.g, e.gl = c.g, c.gl
	e.setPen(c.pen)
	e.setMode(modeOrigin, c.origin)
	e.x, e.y = min(c.x, e.cols-1), min(c.y, e.rows-1)
}

// enterAlt switches to a fresh alternate screen, saving the cursor for
// mode 1049.
func (e *Emulator) enterAlt(saveCursor bool) {
	if e.alt != nil {
		return
	}
	if saveCursor {
		e.altSaved = cursor{x: e.x, y: e.y, pen: e.pen, set: true}
	}
	e.altFrom = e.y
	e.hist.endLine() // tmux clears the screen it saves, which ends the line
	e.alt = &screen{lines: make([]line, e.rows)}
	e.scr = e.alt
}

// leaveAlt returns to the main screen and frees the alternate one, so a
// session that ran a full-screen program goes back to costing what an idle
// one does. The cursor saved by 1049 comes back even if the alternate
// screen was not on, as in tmux.
func (e *Emulator) leaveAlt(restoreCursor bool) {
	if restoreCursor && e.altSaved.set {
		e.x, e.y = e.altSaved.x, e.altSaved.y
		e.setPen(e.altSaved.pen)
	}
	if e.alt != nil {
		e.alt = nil
		e.scr = &e.main
		e.dropPens()
	}
	e.x, e.y = min(e.x, e.cols-1), min(e.y, e.rows-1)
}

func (e *Emulator) softReset() {
	e.modes &^= modeInsert | modeOrigin | modeAppCursor | modeAppKeypad
	e.modes |= modeAutowrap | modeCursorVisible
	e.top, e.bot = 0, e.rows-1
	e.g, e.gl = [2]charset{}, 0
	e.saved = cursor{}
	e.setPen(0)
}

// fullReset is RIS as tmux does it: modes, tabs and the region reset, the
// screen in use cleared (into the history if it is the main one), the
// cursor home. The alternate screen stays on if it was.
func (e *Emulator) fullReset() {
	e.resetModes()
	e.clearScreen()
	e.x, e.y = 0, 0
}

func (e *Emulator) resetModes() {
	e.modes = modeAutowrap | modeCursorVisible
	e.top, e.bot = 0, e.rows-1
	e.g, e.gl = [2]charset{}, 0
	e.tabs = nil
	e.shape = 0
	e.setPen(0)
}
