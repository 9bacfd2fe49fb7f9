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
			if c := l.cells[cols-1]; c != blank && c != tail && runeWidth(c) == 2 {
				l.cells[cols-1] = blank
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
func (e *Emulator) reflow(rows, cols, x, y int) (nx, ny int) {
	s := &e.main
	last := y
	for k := e.rows - 1; k > last; k-- {
		if len(s.line(k).cells) > 0 {
			last = k
			break
		}
	}

	var out []line
	var row line
	col := 0
	flush := func(wrapped bool) {
		row.wrapped = wrapped
		out = append(out, row)
		row, col = line{}, 0
	}
	var cells []rune
	marks := map[int]string{}
	curOff := -1
	for k := 0; k <= last; k++ {
		l := s.line(k)
		cs := l.cells
		if l.wrapped {
			for len(cs) > 0 && cs[len(cs)-1] == blank {
				cs = cs[:len(cs)-1]
			}
		}
		if k == y {
			curOff = len(cells) + x
		}
		for mx, m := range l.marks {
			marks[len(cells)+mx] = m
		}
		cells = append(cells, cs...)
		if l.wrapped && k < last {
			continue
		}
		// Lay out one logical line.
		for off, c := range cells {
			w := 1
			if c == tail {
				if off == curOff {
					nx, ny = col-1, len(out)
				}
				continue
			}
			if c != blank && runeWidth(c) == 2 {
				w = 2
			}
			if col+w > cols {
				flush(true)
			}
			if off == curOff {
				nx, ny = col, len(out)
			}
			row.cells = append(row.cells, c)
			if w == 2 {
				row.cells = append(row.cells, tail)
			}
			if m, ok := marks[off]; ok {
				if row.marks == nil {
					row.marks = map[int]string{}
				}
				row.marks[col] = m
			}
			col += w
		}
		if curOff >= len(cells) {
			extra := curOff - len(cells)
			nx, ny = col+extra, len(out)
			if extra > 0 && nx >= cols {
				nx = cols - 1
			}
			nx = min(nx, cols)
		}
		flush(false)
		cells, curOff = cells[:0], -1
		clear(marks)
	}

	excess := min(max(len(out)-rows, 0), ny)
	for k := range excess {
		e.push(&out[k])
	}
	out = out[excess:]
	ny -= excess
	s.lines = make([]line, rows)
	copy(s.lines, out)
	s.base = 0
	return nx, min(ny, rows-1)
}
