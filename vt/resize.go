package vt

// Resize changes the size to rows × cols. The main screen's logical lines
// are wrapped again at the new width, as tmux does; rows that no longer fit
// above the cursor go to the history as final lines, rows below the cursor
// that do not fit are dropped (the cursor's row stays visible), and a
// screen that grows gains blank rows at the bottom (final lines never come
// back). The
// alternate screen is cut or padded: the program in it redraws on
// SIGWINCH. A size out of range returns a *SizeError and changes nothing.
func (e *Emulator) Resize(rows, cols int) error {
	if err := checkSize(rows, cols); err != nil {
		return err
	}
	if rows == e.rows && cols == e.cols {
		return nil
	}
	if e.alt == nil {
		e.x, e.y = e.reflow(rows, cols, e.x, e.y)
	} else {
		c := e.altSaved
		c.x, c.y = e.reflow(rows, cols, c.x, e.altFrom)
		e.altFrom = c.y
		if e.altSaved.set {
			e.altSaved = c
		}
		e.alt.lines = cut(e.alt, e.rows, rows, cols)
		e.x, e.y = min(e.x, cols), min(e.y, rows-1)
	}
	if e.tabs != nil {
		t := make([]bool, cols)
		n := copy(t, e.tabs)
		for x := n; x < cols; x++ {
			t[x] = x%8 == 0
		}
		e.tabs = t
	}
	e.rows, e.cols = rows, cols
	e.top, e.bot = 0, rows-1
	return nil
}

// cut returns the rows of s for a new size, without rewrapping: the top
// rows are kept and each is cut at the new width.
func cut(s *screen, oldRows, rows, cols int) []line {
	out := make([]line, rows)
	for y := 0; y < min(rows, oldRows); y++ {
		l := *s.line(y)
		if len(l.cells) > cols {
			l.cells = l.cells[:cols:cols]
			if len(l.attrs) > cols {
				l.attrs = l.attrs[:cols:cols]
			}
			if c := l.cells[cols-1]; c != blank && c != tail && runeWidth(c) == 2 {
				l.blankCell(cols - 1)
			}
			l.unmarkRange(cols, 1<<31-1)
		}
		out[y] = l
	}
	return out
}

// reflow wraps the main screen's logical lines again at cols and keeps the
// last rows of them, pushing those above into the history, but never the
// cursor's row. It returns where the cursor, at (x, y) before, is now.
// The steps are tmux's grid_reflow ones: join the rows of one logical line
// (join), lay it out again at the new width (split), and keep the last
// rows (reflowKeep).
func (e *Emulator) reflow(rows, cols, x, y int) (nx, ny int) {
	r := reflower{cols: cols, marks: map[int]string{}}
	last := lastUsedRow(&e.main, e.rows, y)
	for k := 0; k <= last; {
		var curOff int
		k, curOff = r.join(&e.main, k, last, x, y)
		r.split(curOff)
	}
	return e.reflowKeep(r.out, rows, r.nx, r.ny)
}

// reflower holds a reflow's state.
type reflower struct {
	cols   int
	cells  []rune         // the logical line joined
	pens   []uint16       // the pen index of each of cells
	marks  map[int]string // its combining marks, by offset in cells
	out    []line         // the rows laid out so far
	row    line           // the row being filled
	col    int            // the next column of row
	nx, ny int            // where the cursor is now
}

// lastUsedRow returns the last row a reflow keeps of s: the cursor's row
// y, or the last row below it that holds something.
func lastUsedRow(s *screen, rows, y int) int {
	for k := rows - 1; k > y; k-- {
		if len(s.line(k).cells) > 0 {
			return k
		}
	}
	return y
}

// join gathers the rows of the logical line that starts at row k, up to
// row last, into r.cells and r.marks; the blanks that end a wrapped row
// are not part of the line. It returns the row after the line, and the
// cursor's offset in the line (-1: the cursor is on another line).
func (r *reflower) join(s *screen, k, last, x, y int) (next, curOff int) {
	r.cells = r.cells[:0]
	r.pens = r.pens[:0]
	clear(r.marks)
	curOff = -1
	for ; ; k++ {
		l := s.line(k)
		cs := l.cells
		if l.wrapped {
			for len(cs) > 0 && cs[len(cs)-1] == blank {
				cs = cs[:len(cs)-1]
			}
		}
		if k == y {
			curOff = len(r.cells) + x
		}
		for mx, m := range l.marks {
			r.marks[len(r.cells)+mx] = m
		}
		r.cells = append(r.cells, cs...)
		for x := range cs {
			r.pens = append(r.pens, l.penAt(x))
		}
		if !l.wrapped || k == last {
			return k + 1, curOff
		}
	}
}

// split lays the joined line out in rows of r.cols, wrapping before a
// character that does not fit, and notes where the cursor went when it
// is on this line (curOff, from join).
func (r *reflower) split(curOff int) {
	for off, c := range r.cells {
		if c == tail {
			if off == curOff {
				r.nx, r.ny = r.col-1, len(r.out)
			}
			continue
		}
		w := 1
		if c != blank && runeWidth(c) == 2 {
			w = 2
		}
		if r.col+w > r.cols {
			r.endRow(true)
		}
		if off == curOff {
			r.nx, r.ny = r.col, len(r.out)
		}
		r.row.cells = append(r.row.cells, c)
		if w == 2 {
			r.row.cells = append(r.row.cells, tail)
		}
		if p := r.pens[off]; p != 0 {
			r.row.setPen(r.col, r.col+w, p)
		}
		if m, ok := r.marks[off]; ok {
			if r.row.marks == nil {
				r.row.marks = map[int]string{}
			}
			r.row.marks[r.col] = m
		}
		r.col += w
	}
	if curOff >= len(r.cells) {
		// The cursor stands past the line's text, as far past it as before.
		extra := curOff - len(r.cells)
		r.nx, r.ny = r.col+extra, len(r.out)
		if extra > 0 && r.nx >= r.cols {
			r.nx = r.cols - 1
		}
		r.nx = min(r.nx, r.cols)
	}
	r.endRow(false)
}

// endRow ends the row being filled; wrapped: the line goes on.
func (r *reflower) endRow(wrapped bool) {
	r.row.wrapped = wrapped
	r.out = append(r.out, r.row)
	r.row, r.col = line{}, 0
}

// reflowKeep makes the last rows of out the main screen. The rows above
// them go to the history, but never the cursor's row (at ny): a screen
// too short for the rows down to the cursor's drops those below it. It
// returns the cursor's position on the new screen.
func (e *Emulator) reflowKeep(out []line, rows, nx, ny int) (int, int) {
	excess := min(max(len(out)-rows, 0), ny)
	for k := range excess {
		e.push(&out[k])
	}
	out = out[excess:]
	ny -= excess
	s := &e.main
	s.lines = make([]line, rows)
	copy(s.lines, out)
	s.base = 0
	return nx, min(ny, rows-1)
}
