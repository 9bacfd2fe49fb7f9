package vt

import (
	"strconv"
	"unicode/utf8"
)

// This file draws the terminal's state as output: what a viewer who
// arrives late writes to a terminal of its own (xterm.js in a browser) to
// see what a person at this one sees, and to draw what follows as it
// would. Here the history and the screen's cells; the state after them
// in render_state.go, the pen's changes in render_pen.go.

// Cell returns what cell (row, col) of the screen shows, counted from 0:
// its character with any combining marks (" " for a blank cell, "" for
// the right half of a wide character, whose left half holds it), and the
// pen it is drawn with. Outside the screen it returns "" and the default
// pen.
func (e *Emulator) Cell(row, col int) (text string, pen Pen) {
	if row < 0 || row >= e.rows || col < 0 || col >= e.cols {
		return "", Pen{}
	}
	l := e.scr.line(row)
	pen = e.penOf(l.penAt(col))
	if col >= len(l.cells) {
		return " ", pen
	}
	return string(appendCell(nil, l, col)), pen
}

// Render returns output that, written to a new terminal of the same size
// (xterm.js, or a new Emulator), shows what this one shows and leaves it
// in the same state for what the program prints next: up to history of
// the newest final lines as plain text (none for 0), scrolled into the
// new terminal's scrollback, with the start of the line the screen's top
// row continues; the main screen with its colours and attributes, wrapped
// rows wrapped again; when a program shows the alternate screen, that
// screen over it (ESC [ ? 1049 h); then the saved cursor, tab stops,
// scroll region, modes, cursor position, cursor style and visibility,
// character sets and the current pen. Only what changes between cells is
// set again: the output is about as long as what the program wrote to
// draw the screen (6.6 KB for a 40×160 screen drawn as top draws it).
func (e *Emulator) Render(history int) []byte {
	r := renderer{e: e, x: -1, y: -1}
	r.screen(&e.main, r.history(history))
	if e.alt != nil {
		r.alternate()
	}
	r.savedCursor()
	r.tabStops()
	r.cursor()
	r.modes()
	r.setPen(e.pen.Pen())
	return r.b
}

// renderer is the state of the output Render builds: the pen and cursor
// position a terminal that reads it has at the end of it so far.
type renderer struct {
	e    *Emulator
	b    []byte
	pen  Pen
	x, y int // x == cols: the pending-wrap position
	// joined reports that the row being drawn continues the one above,
	// which erasing it whole would end.
	joined bool
}

func (r *renderer) csi(params string, final byte) {
	r.b = append(r.b, "\x1b["...)
	r.b = append(r.b, params...)
	r.b = append(r.b, final)
}

// history writes the newest n final lines, each as a line, then enough
// line feeds that they leave the screen, which is left blank. It returns
// the start of the logical line the screen's top row continues (rows that
// scrolled off), which screen draws before that row.
func (r *renderer) history(n int) (partial []byte) {
	h := &r.e.hist
	if n <= 0 {
		return nil
	}
	if h.open {
		partial = h.partial
	}
	from := max(h.first, h.total-int64(n))
	if from == h.total {
		return partial
	}
	for i := from; i < h.total; i++ {
		r.b = append(r.b, h.line(int(i-h.first))...)
		r.b = append(r.b, "\r\n"...)
	}
	// Wherever the text left the cursor, rows-1 line feeds scroll every
	// row above it away and no blank row after them.
	for range r.e.rows - 1 {
		r.b = append(r.b, '\n')
	}
	return partial
}

// screen draws s from the top left corner, row after row, the way it was
// written: a row the terminal wrapped is drawn to its end and the next
// one follows by wrapping, so that the new terminal joins them as this
// one does; other rows end with CR LF. partial, the start of the top
// row's logical line, is drawn first, and scrolls away as the rows below
// it are drawn.
func (r *renderer) screen(s *screen, partial []byte) {
	e := r.e
	r.jump(0, 0)
	last := e.rows - 1
	if len(partial) == 0 {
		for last > 0 && len(s.line(last).cells) == 0 && !s.line(last-1).wrapped {
			last--
		}
	}
	cont := r.partial(partial)
	scrolls := cont // rows drawn below the bottom scroll the screen
	for y := 0; y <= last; y++ {
		l := s.line(y)
		from := 0
		switch {
		case cont:
			from = r.continueRow(l, scrolls)
		case y > 0:
			r.setPen(Pen{}) // a line feed that scrolls fills the new row with the background
			r.b = append(r.b, "\r\n"...)
			r.x = 0
		}
		r.joined = cont
		r.row(l, from)
		// A wide character pushed into the last column cannot be drawn
		// with the cursor after it: the row ends there.
		cont = l.wrapped && y < e.rows-1 && !edgeWide(l, e.cols) && r.toEdge(l)
	}
	r.y = last
}

// partial draws the text of rows that scrolled off, filled to the
// pending-wrap position of its last row, and reports whether it did.
func (r *renderer) partial(text []byte) bool {
	if len(text) == 0 {
		return false
	}
	r.setPen(Pen{})
	r.b = append(r.b, text...)
	r.b = append(r.b, "\x1b(0"...) // spaces that are not stored; see space
	col := 0
	for _, c := range string(text) {
		w := runeWidth(c)
		if w <= 0 {
			continue
		}
		if col+w > r.e.cols {
			col = 0
		}
		col += w
	}
	for ; col < r.e.cols; col++ {
		r.b = append(r.b, ' ')
	}
	r.b = append(r.b, "\x1b(B"...)
	r.x = r.e.cols
	return true
}

// continueRow starts a row from the pending-wrap position at the end of
// the row above: the character printed next wraps. When the row does not
// start with a character, a space does it. A wrap that scrolls fills the
// new row with the pen's background in xterm.js (not in tmux or this
// package), so when the character has one, the rest is erased again. It
// returns the first cell left to draw.
func (r *renderer) continueRow(l *line, scrolls bool) int {
	if len(l.cells) == 0 || l.cells[0] == blank || l.cells[0] == tail {
		r.space(l, 0)
		r.x = 1
		return 0
	}
	r.x = 0
	if !scrolls || r.e.penOf(l.penAt(0)).Bg == DefaultColor {
		return 0
	}
	r.drawCell(l, 0)
	r.setPen(Pen{})
	r.b = append(r.b, "\x1b[K"...)
	return 1
}

// toEdge leaves the cursor at the pending-wrap position of the row: when
// the row's last cell was not drawn, it is drawn. It reports false when
// that cannot be done (a right half alone in the last column).
func (r *renderer) toEdge(l *line) bool {
	cols := r.e.cols
	if r.x == cols {
		return true
	}
	x := cols - 1
	if x < len(l.cells) && l.cells[x] == tail && x > 0 {
		x--
	}
	r.forward(x)
	if x >= len(l.cells) || l.cells[x] == blank && l.penAt(x) == 0 {
		r.space(l, x)
		r.x++
		return r.x == cols
	}
	r.drawCell(l, x) // a blank in a background colour as a space in it
	return r.x == cols
}

// space prints a space on blank cell x in the default pen. On a cell
// never written since the row was cleared, it goes through the DEC
// graphics set: a space printed outside tmux's fast path for text is not
// stored when it would read as what is there, so the row counts as used
// no further than here, which decides how rows join.
func (r *renderer) space(l *line, x int) {
	r.setPen(Pen{})
	if x >= len(l.cells) {
		r.b = append(r.b, "\x1b(0 \x1b(B"...)
		return
	}
	r.b = append(r.b, ' ')
}

// row draws the cells of a row from from on that are not blank in the
// default pen.
func (r *renderer) row(l *line, from int) {
	for x := from; x < len(l.cells); {
		c, p := l.cells[x], l.penAt(x)
		switch {
		case c == tail:
			if x == 0 || l.cells[x-1] == tail || l.cells[x-1] == blank || runeWidth(l.cells[x-1]) != 2 {
				r.orphan(l, x)
			}
			x++
		case c == blank && p == 0:
			x++
		case c == blank:
			n := 1
			for x+n < len(l.cells) && l.cells[x+n] == blank && l.penAt(x+n) == p {
				n++
			}
			r.blanks(x, n, r.e.penOf(p))
			x += n
		case x == r.e.cols-1 && runeWidth(c) == 2:
			r.drawEdgeWide(l, x)
			x++
		default:
			r.forward(x)
			r.drawCell(l, x)
			if x+1 < r.e.cols && runeWidth(c) == 2 && (x+1 >= len(l.cells) || l.cells[x+1] != tail) {
				// A left half without its right one (ICH and DCH move
				// halves apart, as in tmux): ECH erases the right half
				// and leaves the left alone.
				r.setPen(Pen{})
				r.forward(x + 1)
				r.b = append(r.b, "\x1b[X"...)
			}
			x++
		}
	}
	// A row is used as far as it was written, blanks included, which
	// decides which rows the transcript shows.
	if n := len(l.cells); n > 0 && l.cells[n-1] == blank && l.penAt(n-1) == 0 {
		r.forward(n - 1)
		r.setPen(Pen{})
		r.b = append(r.b, ' ')
		r.x = n
	}
}

// orphan draws the right half of a wide character without its left half
// at x (erasing a cell leaves the other half alone, as in tmux): a wide
// space at x-1, its left half erased, then cell x-1 drawn again.
func (r *renderer) orphan(l *line, x int) {
	r.forward(x)
	r.setPen(r.e.penOf(l.penAt(x)))
	if x < r.e.cols-1 {
		// The cells after x are not drawn yet: DCH moves the right half
		// of a wide space to x and blanks in after it.
		r.b = append(r.b, "\u3000"...)
		r.x = x + 2
		r.setPen(Pen{})
		r.forward(x)
		r.b = append(r.b, "\x1b[P"...)
		return
	}
	if l.cells[x-1] == tail {
		return // two right halves in the last columns: left blank
	}
	r.forward(x - 1)
	r.b = append(r.b, "\u3000"...)
	r.x = x + 1
	r.setPen(Pen{})
	r.forward(x - 1)
	r.b = append(r.b, "\x1b[X"...)
	switch c := l.cells[x-1]; {
	case c == blank && l.penAt(x-1) != 0:
		r.blanks(x-1, 1, r.e.penOf(l.penAt(x-1)))
	case c != blank:
		r.drawCell(l, x-1)
	}
}

// edgeWide reports whether l ends in a wide character in its last
// column.
func edgeWide(l *line, cols int) bool {
	return len(l.cells) == cols && l.cells[cols-1] != blank && l.cells[cols-1] != tail && runeWidth(l.cells[cols-1]) == 2
}

// drawEdgeWide draws a wide character in the last column x, without its
// right half (insert mode pushes one there, as in tmux): printed a column
// before, then pushed there by ICH, then what it covered is drawn again.
func (r *renderer) drawEdgeWide(l *line, x int) {
	r.forward(x - 1)
	r.drawCell(l, x)
	r.setPen(Pen{})
	r.forward(x - 1)
	r.b = append(r.b, "\x1b[@"...)
	k := x - 1
	for k > 0 && l.cells[k] == tail {
		k--
	}
	switch c := l.cells[k]; {
	case c == blank && l.penAt(k) != 0:
		r.blanks(k, 1, r.e.penOf(l.penAt(k)))
	case c != blank && c != tail:
		r.forward(k)
		r.drawCell(l, k)
	}
}

// blanks draws n blank cells in pen p from x. Erased cells have the
// background colour alone, and ECH makes them as the terminal made them;
// any other pen needs spaces.
func (r *renderer) blanks(x, n int, p Pen) {
	r.forward(x)
	r.setPen(p)
	if p == (Pen{Bg: p.Bg}) {
		if r.joined && n == r.e.cols {
			// Erasing the whole row would end the line above it.
			r.b = append(r.b, "\x1b[X\x1b[C"...)
			x, n = x+1, n-1
			r.x = x
		}
		r.csi(strconv.Itoa(n), 'X')
		return
	}
	for range n {
		r.b = append(r.b, ' ')
	}
	r.x += n
}

// drawCell prints cell x of l, the cursor being on it.
func (r *renderer) drawCell(l *line, x int) {
	r.setPen(r.e.penOf(l.penAt(x)))
	r.b = appendCell(r.b, l, x)
	w := 1
	if x < len(l.cells) && l.cells[x] != blank && runeWidth(l.cells[x]) == 2 {
		w = 2
	}
	r.x = x + w
}

// appendCell appends the text of cell x of l: its character and marks, a
// space for a blank, nothing for a right half.
func appendCell(b []byte, l *line, x int) []byte {
	if x >= len(l.cells) {
		return append(b, ' ')
	}
	switch c := l.cells[x]; {
	case c == blank:
		return append(b, ' ')
	case c == tail:
		return b
	case c < utf8.RuneSelf:
		b = append(b, byte(c))
	default:
		b = utf8.AppendRune(b, c)
	}
	if l.marks != nil {
		b = append(b, l.marks[x]...)
	}
	return b
}

// forward moves the output's cursor to column x of its row: forward, or
// back by CHA (terminals count CUB from the pending-wrap position
// differently).
func (r *renderer) forward(x int) {
	switch n := x - r.x; {
	case n < 0:
		r.csi(strconv.Itoa(x+1), 'G')
	case n == 1:
		r.csi("", 'C')
	case n > 1:
		r.csi(strconv.Itoa(n), 'C')
	}
	r.x = min(x, r.e.cols-1)
}

// jump moves the output's cursor to (x, y).
func (r *renderer) jump(x, y int) {
	switch {
	case r.x == x && r.y == y:
		return
	case x == 0 && y == 0:
		r.csi("", 'H')
	case x == 0:
		r.csi(strconv.Itoa(y+1), 'H')
	default:
		r.csi(strconv.Itoa(y+1)+";"+strconv.Itoa(x+1), 'H')
	}
	r.x, r.y = x, y
}
