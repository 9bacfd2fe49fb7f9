package vt

// This file is the screen's storage, as tmux's grid.c is: cells, rows
// (line) and the ring of rows (screen). What a program's output does to
// them is in screen.go and its neighbours (motion.go, scroll.go, erase.go).

// A cell holds a character, blank, or the right half of a wide character,
// and the index of its pen (pen.go) in the row's attrs.
const (
	blank rune = 0  // never written, or erased
	tail  rune = -1 // the second column of a wide character
)

// maxMarks bounds the combining characters kept on one cell, in bytes.
const maxMarks = 16

// line is one row. Cells past len(cells) are blank, so a row costs memory
// only as far as something was written on it. Erasing blanks cells without
// shortening the row, as tmux does: whether a row was ever written since it
// was last cleared whole decides what EL 2 does to the row above.
type line struct {
	cells []rune
	// attrs holds the pen index of cells[:len(attrs)]; the cells after it
	// have the default pen. It stays empty on a row that never had
	// another, so plain text costs nothing here.
	attrs []uint16
	// marks holds combining characters (U+0301, ZWJ, variation selectors)
	// that follow the character of a cell; nil on almost every row.
	marks map[int]string
	// wrapped reports that the terminal wrapped this row: its logical line
	// continues on the next one.
	wrapped bool
}

func (l *line) reset() {
	l.cells = l.cells[:0]
	l.attrs = l.attrs[:0]
	l.marks = nil
	l.wrapped = false
}

// grow makes cells at least n long, never longer than cols.
func (l *line) grow(n, cols int) {
	if n <= len(l.cells) {
		return
	}
	if n > cap(l.cells) {
		c := make([]rune, len(l.cells), min(max(n, 2*cap(l.cells), 16), cols))
		copy(c, l.cells)
		l.cells = c
	}
	clear(l.cells[len(l.cells):n])
	l.cells = l.cells[:n]
}

// setPen gives cells [x0, x1) pen index p; x1 <= len(cells).
func (l *line) setPen(x0, x1 int, p uint16) {
	if p == 0 {
		if x0 < len(l.attrs) {
			clear(l.attrs[x0:min(x1, len(l.attrs))])
		}
		return
	}
	l.growAttrs(x1)
	a := l.attrs[x0:x1]
	for i := range a {
		a[i] = p
	}
}

// growAttrs makes attrs at least n long, the new cells with the default
// pen.
func (l *line) growAttrs(n int) {
	k := len(l.attrs)
	if n <= k {
		return
	}
	if n > cap(l.attrs) {
		// As long as cells may grow, never longer.
		a := make([]uint16, k, max(n, min(2*cap(l.attrs), cap(l.cells)), min(16, cap(l.cells))))
		copy(a, l.attrs)
		l.attrs = a
	}
	l.attrs = l.attrs[:n]
	clear(l.attrs[k:])
}

// penAt returns the pen index of cell x.
func (l *line) penAt(x int) uint16 {
	if x < len(l.attrs) {
		return l.attrs[x]
	}
	return 0
}

// blankCell blanks cell x with the default pen.
func (l *line) blankCell(x int) {
	l.cells[x] = blank
	if x < len(l.attrs) {
		l.attrs[x] = 0
	}
}

// A write over part of a wide character leaves what tmux leaves, which
// depends on its path: plain ASCII with autowrap goes through its
// collector (fixRun), everything else through screen_write_overwrite
// (fixCell). Erasing, inserting and deleting cells leave halves alone. A
// right half without its left reads as nothing.

// fixRun prepares [x0, x1) for a run of ASCII: right halves at x0 and just
// before it are blanked, then their left half if it is wide (tmux never
// looks at column 0 for it), and right halves after the run.
func (l *line) fixRun(x0, x1 int) {
	if x0 > 0 && x0 < len(l.cells) {
		k := x0
		for ; k > 0 && l.cells[k] == tail; k-- {
			l.blankCell(k)
		}
		if k > 0 && runeWidth(l.cells[k]) == 2 {
			l.blankCell(k)
			l.unmark(k)
		}
	}
	l.fixAfter(x1)
}

// fixCell prepares [x, x+w) for one character: if x holds a right half,
// the right halves before it and the cell they lead back to are blanked
// (whatever that cell holds, as tmux does); if the character or the one it
// replaces is wide, right halves after it are blanked.
func (l *line) fixCell(x, w int) {
	if x >= len(l.cells) {
		return
	}
	c := l.cells[x]
	if c == tail {
		k := x
		for k > 0 && l.cells[k] == tail {
			l.blankCell(k)
			k--
		}
		l.blankCell(k)
		l.unmark(k)
	}
	if w != 1 || c == tail || c != blank && runeWidth(c) == 2 {
		l.fixAfter(x + w)
	}
}

func (l *line) fixAfter(x int) {
	for ; x < len(l.cells) && l.cells[x] == tail; x++ {
		l.blankCell(x)
	}
}

func (l *line) unmark(x int) {
	if l.marks != nil {
		delete(l.marks, x)
	}
}

func (l *line) unmarkRange(x0, x1 int) {
	for x := range l.marks {
		if x >= x0 && x < x1 {
			delete(l.marks, x)
		}
	}
}

// erase blanks [x0, x1) with pen index bg, clipped to the written cells
// when bg is the default: as in tmux, erasing with a background colour
// writes the cells (x1 <= cols).
func (l *line) erase(x0, x1, cols int, bg uint16) {
	if bg != 0 {
		l.grow(x1, cols)
	}
	x1 = min(x1, len(l.cells))
	if x0 >= x1 {
		return
	}
	clear(l.cells[x0:x1])
	l.setPen(x0, x1, bg)
	l.unmarkRange(x0, x1)
}

// fill makes a cleared row blank with pen index bg to its end, as tmux's
// grid_empty_line does with a background colour.
func (l *line) fill(cols int, bg uint16) {
	if bg != 0 {
		l.grow(cols, cols)
		l.setPen(0, cols, bg)
	}
}

// shiftMarks moves the marks at or after x by d columns, dropping those
// that land outside [0, limit).
func (l *line) shiftMarks(x, d, limit int) {
	if l.marks == nil {
		return
	}
	m := make(map[int]string, len(l.marks))
	for k, v := range l.marks {
		if k >= x {
			k += d
		}
		if k >= 0 && k < limit {
			m[k] = v
		}
	}
	l.marks = m
}

// screen is a grid of rows. lines is a ring, so scrolling the whole screen
// moves no rows.
type screen struct {
	lines []line
	base  int
}

func (s *screen) line(y int) *line {
	i := s.base + y
	if i >= len(s.lines) {
		i -= len(s.lines)
	}
	return &s.lines[i]
}
