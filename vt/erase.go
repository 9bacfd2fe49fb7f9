package vt

// Editing a row and erasing: characters inserted, deleted and erased in
// the cursor's row, the erases of a line and of the display, and the
// alignment test's screen of Es.

// insertBlanks is ICH, as tmux's grid_view_insert_cells: the cells from
// the cursor move right, those pushed past the edge are lost, and the row
// counts as used to its end. (When more cells are inserted than move,
// tmux blanks only as many as moved; here all are blank, as a terminal
// shows them.)
func (e *Emulator) insertBlanks(n int) {
	x := e.x
	if x >= e.cols {
		return
	}
	l := e.cur()
	if x >= e.cols-1 {
		l.erase(x, x+1, e.cols, e.bgIx)
		return
	}
	n = min(n, e.cols-x)
	l.grow(e.cols, e.cols)
	copy(l.cells[x+n:], l.cells[x:e.cols-n])
	clear(l.cells[x : x+n])
	if x < len(l.attrs) {
		l.growAttrs(e.cols)
		copy(l.attrs[x+n:], l.attrs[x:e.cols-n])
	}
	l.setPen(x, x+n, e.bgIx)
	l.shiftMarks(x, n, e.cols)
}

// deleteChars is DCH, as tmux's grid_view_delete_cells: the cells after
// the deleted ones move left, blanks come in at the edge, and the row
// counts as used to where the moved cells end.
func (e *Emulator) deleteChars(n int) {
	x := e.x
	if x >= e.cols {
		return
	}
	l := e.cur()
	n = min(n, e.cols-x)
	used := max(len(l.cells), e.cols-n)
	l.grow(e.cols, e.cols)
	copy(l.cells[x:], l.cells[x+n:])
	clear(l.cells[e.cols-n:])
	if x < len(l.attrs) {
		l.growAttrs(e.cols)
		copy(l.attrs[x:], l.attrs[x+n:])
		l.setPen(e.cols-n, e.cols, 0)
	}
	if e.bgIx != 0 {
		// The cells that come in at the edge are written, with the
		// background colour.
		used = e.cols
		l.setPen(e.cols-n, e.cols, e.bgIx)
	}
	l.cells = l.cells[:used]
	l.attrs = l.attrs[:min(len(l.attrs), used)]
	if l.marks != nil {
		l.unmarkRange(x, x+n)
		l.shiftMarks(x+n, -n, e.cols)
	}
}

// eraseRow blanks [x0, x1) of row y; the whole row counts as a row clear.
func (e *Emulator) eraseRow(y, x0, x1 int) {
	if x0 <= 0 && x1 >= e.cols {
		e.clearLines(y, 1)
		return
	}
	e.scr.line(y).erase(x0, x1, e.cols, e.bgIx)
}

func (e *Emulator) eraseChars(n int) {
	if e.x >= e.cols {
		return
	}
	e.eraseRow(e.y, e.x, e.x+min(n, e.cols-e.x))
}

func (e *Emulator) eraseLine(mode int) {
	switch {
	case mode == 2, mode == 0 && e.x == 0, mode == 1 && e.x >= e.cols-1:
		// tmux leaves a row never written alone, unless a background
		// colour fills it.
		if len(e.cur().cells) > 0 || e.bgIx != 0 {
			e.clearLines(e.y, 1)
		}
	case mode == 0:
		if e.x < e.cols {
			e.cur().erase(e.x, e.cols, e.cols, e.bgIx)
		}
	case mode == 1:
		e.cur().erase(0, min(e.x+1, e.cols), e.cols, e.bgIx)
	}
}

func (e *Emulator) eraseDisplay(mode int) {
	switch mode {
	case 0:
		if e.x == 0 && e.y == 0 {
			e.clearScreen()
			return
		}
		if e.x < e.cols {
			e.eraseRow(e.y, e.x, e.cols)
		}
		e.clearLines(e.y+1, e.rows-e.y-1)
	case 1:
		e.clearLines(0, e.y)
		e.eraseRow(e.y, 0, min(e.x, e.cols-1)+1)
	case 2:
		e.clearScreen()
	}
	// 3 (erase saved lines) leaves the history alone: its lines are final.
}

// clearScreen blanks the screen. On the main screen it first moves the
// rows up to the last one with text into the history, as tmux does, so a
// clear loses no output.
func (e *Emulator) clearScreen() {
	s := e.scr
	if s == &e.main {
		last := -1
		for y := 0; y < e.rows; y++ {
			if len(s.line(y).cells) > 0 {
				last = y
			}
		}
		for y := 0; y <= last; y++ {
			e.push(s.line(y))
		}
		if last == e.rows-1 {
			// Every row went to the history, the way lines scroll: the
			// newest keeps its wrapped flag.
			for y := 0; y < e.rows; y++ {
				e.blankLine(s.line(y))
			}
			return
		}
	}
	e.clearLines(0, e.rows)
}

func (e *Emulator) alignmentTest() {
	for y := 0; y < e.rows; y++ {
		l := e.scr.line(y)
		l.marks = nil
		l.attrs = l.attrs[:0]
		l.grow(e.cols, e.cols)
		for x := range l.cells {
			l.cells[x] = 'E'
		}
	}
	e.x, e.y = 0, 0
	e.top, e.bot = 0, e.rows-1
}
