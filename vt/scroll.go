package vt

// Scrolling: index and reverse index, lines cleared, moved, inserted and
// deleted inside the scroll region, as tmux's screen-write.c scrolls; the
// lines that leave the top of the main screen go to the history.

// index moves the cursor down, scrolling at the bottom margin.
func (e *Emulator) index() {
	switch {
	case e.y == e.bot:
		e.scrollUp(1)
	case e.y < e.rows-1:
		e.y++
	}
}

func (e *Emulator) reverseIndex() {
	switch {
	case e.y == e.top:
		e.scrollDown(1)
	case e.y > 0:
		e.y--
	}
}

// The row operations below follow tmux's grid (grid.c, grid-view.c) step
// by step, because the wrapped flags they leave decide which rows the
// transcript joins: a row that was wrapped into a row that is cleared,
// replaced or moved away no longer continues into what is there now.

// unwrapAbove clears the wrapped flag of the row above row y. Above row 0
// of the main screen is the newest history line: its logical line ends.
func (e *Emulator) unwrapAbove(y int) {
	switch {
	case y > 0:
		e.scr.line(y - 1).wrapped = false
	case e.scr == &e.main:
		e.hist.endLine()
	}
}

// clearLines blanks rows [y, y+n) whole (tmux's grid_clear_lines).
func (e *Emulator) clearLines(y, n int) {
	if n <= 0 || y < 0 || y+n > e.rows {
		return
	}
	for k := y; k < y+n; k++ {
		e.blankLine(e.scr.line(k))
	}
	e.unwrapAbove(y)
}

// blankLine clears l whole with the erase pen: a background colour fills
// it, as in tmux and xterm.
func (e *Emulator) blankLine(l *line) {
	l.reset()
	if e.bgIx != 0 {
		l.fill(e.cols, e.bgIx)
	}
}

// moveLines moves rows [py, py+n) to [dy, dy+n), blanking the rows left
// behind (tmux's grid_move_lines).
func (e *Emulator) moveLines(dy, py, n int) {
	if n <= 0 || py == dy {
		return
	}
	s := e.scr
	e.unwrapAbove(dy)
	// The rows overwritten become the rows left behind, so their cells are
	// reused and nothing is allocated.
	e.spare = e.spare[:0]
	for k := dy; k < dy+n; k++ {
		if k < py || k >= py+n {
			e.spare = append(e.spare, *s.line(k))
		}
	}
	j := 0
	if dy < py {
		for k := 0; k < n; k++ {
			*s.line(dy + k) = *s.line(py + k)
		}
	} else {
		for k := n - 1; k >= 0; k-- {
			*s.line(dy + k) = *s.line(py + k)
		}
	}
	for k := py; k < py+n; k++ {
		if k < dy || k >= dy+n {
			*s.line(k) = e.spare[j]
			j++
			e.blankLine(s.line(k))
		}
	}
	clear(e.spare) // hold no rows' cells here
	if py < dy || py >= dy+n {
		e.unwrapAbove(py)
	}
}

// scrollUp scrolls the region up n lines. On the main screen the lines that
// leave the region go to the history, as tmux does, whatever the region,
// with their wrapped flags.
func (e *Emulator) scrollUp(n int) {
	s := e.scr
	n = min(n, e.bot-e.top+1)
	for range n {
		if s != &e.main {
			e.moveLines(e.top, e.top+1, e.bot-e.top)
			continue
		}
		e.push(s.line(e.top))
		if e.top == 0 && e.bot == e.rows-1 {
			s.base++
			if s.base == len(s.lines) {
				s.base = 0
			}
			e.blankLine(s.line(e.rows - 1))
			continue
		}
		old := *s.line(e.top)
		for y := e.top; y < e.bot; y++ {
			*s.line(y) = *s.line(y + 1)
		}
		*s.line(e.bot) = old
		e.blankLine(s.line(e.bot))
	}
}

func (e *Emulator) scrollDown(n int) {
	n = min(n, e.bot-e.top+1)
	for range n {
		e.moveLines(e.top+1, e.top, e.bot-e.top)
	}
}

// insertLines is IL and deleteLines DL, as tmux's grid does them: inside
// the scroll region they act on it, outside it on the rows to the bottom
// of the screen. (tmux leaves old text in the inserted rows when IL
// outside the region inserts as many rows as remain; here they are blank,
// as a terminal shows them.)
func (e *Emulator) insertLines(n int) {
	outside := e.y < e.top || e.y > e.bot
	bot := e.bot
	if outside {
		bot = e.rows - 1
	}
	n = min(n, bot+1-e.y)
	n2 := bot + 1 - e.y - n
	e.moveLines(e.y+n, e.y, n2)
	if outside {
		e.clearLines(e.y+n2, n-n2)
	} else {
		e.clearRest(e.y+n2, n-n2)
	}
}

func (e *Emulator) deleteLines(n int) {
	bot := e.bot
	if e.y < e.top || e.y > e.bot {
		bot = e.rows - 1
	}
	n = min(n, bot+1-e.y)
	n2 := bot + 1 - e.y - n
	e.moveLines(e.y, e.y+n, n2)
	e.clearRest(e.y+n2, n-n2)
}

// clearRest is the clear that ends tmux's IL and DL. Its count is negative
// when fewer rows were inserted or deleted than moved, and tmux's unsigned
// arithmetic then clears no row but still unwraps the row above y; the
// transcript joins rows by those flags, so this does the same.
func (e *Emulator) clearRest(y, n int) {
	switch {
	case n > 0:
		e.clearLines(y, n)
	case n < 0:
		e.unwrapAbove(y)
	}
}
