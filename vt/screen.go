package vt

// This file is what a program's output does to the grid (grid.go):
// writing characters, moving the cursor, scrolling, erasing, inserting
// and deleting, tab stops, the alternate screen and resets, as tmux's
// screen-write.c does them.

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

// Cursor movement. A movement leaves the pending-wrap position first, as
// tmux does.

func (e *Emulator) cursorUp(n int) {
	e.x = min(e.x, e.cols-1)
	lim := 0
	if e.y >= e.top {
		lim = e.top
	}
	e.y = max(e.y-n, lim)
}

func (e *Emulator) cursorDown(n int) {
	e.x = min(e.x, e.cols-1)
	lim := e.rows - 1
	if e.y <= e.bot {
		lim = e.bot
	}
	e.y = min(e.y+n, lim)
}

func (e *Emulator) cursorForward(n int) {
	e.x = min(e.x+n, e.cols-1)
}

func (e *Emulator) cursorBack(n int) {
	e.x = max(e.x-n, 0)
}

// backspace moves left one column. At the left edge of a row the terminal
// wrapped, it moves to the end of the row above, as tmux does; from the
// pending-wrap position it moves onto the last column.
func (e *Emulator) backspace() {
	switch {
	case e.x > 0:
		e.x = min(e.x, e.cols) - 1
	case e.y > 0 && e.scr.line(e.y-1).wrapped:
		e.y--
		e.x = e.cols - 1
	}
}

// moveTo is CUP: row and col are 0-based, relative to the region in origin
// mode.
func (e *Emulator) moveTo(row, col int) {
	if e.modes&modeOrigin != 0 {
		e.y = min(max(row+e.top, e.top), e.bot)
	} else {
		e.y = min(max(row, 0), e.rows-1)
	}
	e.x = min(max(col, 0), e.cols-1)
}

func (e *Emulator) setRegion(top, bot int) {
	bot = min(bot, e.rows-1)
	if top < 0 || top >= bot {
		return
	}
	e.top, e.bot = top, bot
	e.x, e.y = 0, 0 // the screen's home, in origin mode too, as tmux does
}

// Tabs.

func (e *Emulator) isTab(x int) bool {
	if e.tabs == nil {
		return x%8 == 0
	}
	return e.tabs[x]
}

func (e *Emulator) ownTabs() {
	if e.tabs == nil {
		e.tabs = make([]bool, e.cols)
		for x := 0; x < e.cols; x += 8 {
			e.tabs[x] = true
		}
	}
}

func (e *Emulator) tab(n int) {
	for ; n > 0 && e.x < e.cols-1; n-- {
		x := e.x + 1
		for x < e.cols-1 && !e.isTab(x) {
			x++
		}
		e.x = x
	}
}

func (e *Emulator) backTab(n int) {
	e.x = min(e.x, e.cols-1)
	for ; n > 0 && e.x > 0; n-- {
		x := e.x - 1
		for x > 0 && !e.isTab(x) {
			x--
		}
		e.x = x
	}
}

func (e *Emulator) setTab() {
	if e.x < e.cols {
		e.ownTabs()
		e.tabs[e.x] = true
	}
}

func (e *Emulator) clearTabs(mode int) {
	switch mode {
	case 0:
		if e.x < e.cols {
			e.ownTabs()
			e.tabs[e.x] = false
		}
	case 3:
		e.ownTabs()
		clear(e.tabs)
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
