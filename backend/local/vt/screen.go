package vt

// A cell holds a character, blank, or the right half of a wide character.
// Attributes are not kept: nothing ptyactor reports shows them.
const (
	blank rune = 0  // never written, or erased
	tail  rune = -1 // the second column of a wide character
)

// maxMarks bounds the combining characters kept on one cell, in bytes.
const maxMarks = 16

// line is one row. Cells past len(cells) are blank, so a row costs memory
// only as far as something was written on it.
type line struct {
	cells []rune
	// marks holds combining characters (U+0301, ZWJ, variation selectors)
	// that follow the character of a cell; nil on almost every row.
	marks map[int]string
	// wrapped reports that the terminal wrapped this row: its logical line
	// continues on the next one.
	wrapped bool
}

func (l *line) reset() {
	l.cells = l.cells[:0]
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

// fixWide blanks the halves of wide characters that the range [x0, x1) is
// about to overwrite partly.
func (l *line) fixWide(x0, x1 int) {
	if x0 > 0 && x0 < len(l.cells) && l.cells[x0] == tail {
		l.cells[x0-1] = blank
		l.unmark(x0 - 1)
	}
	if x1 < len(l.cells) && l.cells[x1] == tail {
		l.cells[x1] = blank
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

// erase blanks [x0, x1), clipped to the written cells.
func (l *line) erase(x0, x1 int) {
	x1 = min(x1, len(l.cells))
	if x0 >= x1 {
		return
	}
	l.fixWide(x0, x1)
	if x1 == len(l.cells) {
		l.cells = l.cells[:x0]
	} else {
		clear(l.cells[x0:x1])
	}
	l.unmarkRange(x0, x1)
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
	saved cursor // DECSC
}

func (s *screen) line(y int) *line {
	i := s.base + y
	if i >= len(s.lines) {
		i -= len(s.lines)
	}
	return &s.lines[i]
}

// cursor is what DECSC saves.
type cursor struct {
	x, y   int
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
		return
	}
	for len(b) > 0 {
		if e.x >= e.cols {
			e.cur().wrapped = true
			e.index()
			e.x = 0
		}
		n := min(len(b), e.cols-e.x)
		l := e.cur()
		l.grow(e.x+n, e.cols)
		l.fixWide(e.x, e.x+n)
		cells := l.cells[e.x : e.x+n]
		for i, c := range b[:n] {
			cells[i] = rune(c)
		}
		if l.marks != nil {
			l.unmarkRange(e.x, e.x+n)
		}
		e.x += n
		e.last = rune(b[n-1])
		b = b[n:]
	}
}

// print writes one character.
func (e *Emulator) print(r rune) {
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
	if e.x > e.cols-w {
		if e.modes&modeAutowrap != 0 {
			e.cur().wrapped = true
			e.index()
			e.x = 0
		} else {
			e.x = e.cols - w
		}
	}
	l := e.cur()
	if e.modes&modeInsert != 0 {
		e.insertBlanks(w)
	}
	l.grow(e.x+w, e.cols)
	l.fixWide(e.x, e.x+w)
	l.cells[e.x] = r
	l.unmark(e.x)
	if w == 2 {
		l.cells[e.x+1] = tail
		l.unmark(e.x + 1)
	}
	e.x += w
	e.last = r
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

// repeat is REP: the last character again, n times.
func (e *Emulator) repeat(n int) {
	if e.last == 0 {
		return
	}
	n = min(n, e.rows*e.cols)
	for range n {
		e.print(e.last)
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

// scrollUp scrolls the region up n lines. On the main screen the lines that
// leave the region go to the history, as tmux does, whatever the region.
func (e *Emulator) scrollUp(n int) {
	s := e.scr
	n = min(n, e.bot-e.top+1)
	for range n {
		if s == &e.main {
			e.push(s.line(e.top))
		}
		if e.top == 0 && e.bot == e.rows-1 {
			s.base++
			if s.base == len(s.lines) {
				s.base = 0
			}
			s.line(e.rows - 1).reset()
			continue
		}
		old := *s.line(e.top)
		for y := e.top; y < e.bot; y++ {
			*s.line(y) = *s.line(y + 1)
		}
		*s.line(e.bot) = old
		s.line(e.bot).reset()
	}
}

func (e *Emulator) scrollDown(n int) {
	e.moveLinesDown(e.top, n)
}

// moveLinesDown inserts n blank rows at y, pushing rows below it out of the
// bottom of the region.
func (e *Emulator) moveLinesDown(y, n int) {
	s := e.scr
	n = min(n, e.bot-y+1)
	for range n {
		old := *s.line(e.bot)
		for k := e.bot; k > y; k-- {
			*s.line(k) = *s.line(k - 1)
		}
		*s.line(y) = old
		s.line(y).reset()
	}
}

func (e *Emulator) insertLines(n int) {
	if e.y < e.top || e.y > e.bot {
		return
	}
	e.moveLinesDown(e.y, n)
	e.x = 0
}

func (e *Emulator) deleteLines(n int) {
	if e.y < e.top || e.y > e.bot {
		return
	}
	s := e.scr
	n = min(n, e.bot-e.y+1)
	for range n {
		old := *s.line(e.y)
		for k := e.y; k < e.bot; k++ {
			*s.line(k) = *s.line(k + 1)
		}
		*s.line(e.bot) = old
		s.line(e.bot).reset()
	}
	e.x = 0
}

func (e *Emulator) insertBlanks(n int) {
	x := min(e.x, e.cols-1)
	l := e.cur()
	if x >= len(l.cells) {
		return
	}
	n = min(n, e.cols-x)
	l.fixWide(x, x)
	end := min(len(l.cells)+n, e.cols)
	l.grow(end, e.cols)
	copy(l.cells[x+n:end], l.cells[x:end-n])
	clear(l.cells[x : x+n])
	if c := l.cells[end-1]; c != tail && c != blank && runeWidth(c) == 2 {
		// A wide character pushed half off the right edge.
		l.cells[end-1] = blank
	}
	l.shiftMarks(x, n, end)
}

func (e *Emulator) deleteChars(n int) {
	x := min(e.x, e.cols-1)
	l := e.cur()
	if x >= len(l.cells) {
		return
	}
	n = min(n, len(l.cells)-x)
	l.fixWide(x, x+n)
	copy(l.cells[x:], l.cells[x+n:])
	l.cells = l.cells[:len(l.cells)-n]
	if l.marks != nil {
		l.unmarkRange(x, x+n)
		l.shiftMarks(x+n, -n, e.cols)
	}
}

func (e *Emulator) eraseChars(n int) {
	x := min(e.x, e.cols-1)
	e.cur().erase(x, x+min(n, e.cols-x))
}

func (e *Emulator) eraseLine(mode int) {
	l := e.cur()
	x := min(e.x, e.cols-1)
	switch mode {
	case 0:
		if e.x < e.cols {
			l.erase(x, e.cols)
		}
	case 1:
		l.erase(0, x+1)
	case 2:
		l.erase(0, e.cols)
	}
}

func (e *Emulator) eraseDisplay(mode int) {
	s := e.scr
	switch mode {
	case 0:
		if e.x == 0 && e.y == 0 {
			e.clearScreen()
			return
		}
		e.eraseLine(0)
		for y := e.y + 1; y < e.rows; y++ {
			s.line(y).reset()
		}
	case 1:
		e.eraseLine(1)
		for y := 0; y < e.y; y++ {
			s.line(y).reset()
		}
	case 2:
		e.clearScreen()
	}
	// 3 (erase saved lines) leaves the history alone: its lines are final.
}

// clearScreen blanks the screen. On the main screen it first moves the
// rows that hold text into the history, as tmux does, so a clear loses no
// output.
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
		e.hist.endLine()
	}
	for y := 0; y < e.rows; y++ {
		s.line(y).reset()
	}
}

func (e *Emulator) alignmentTest() {
	e.top, e.bot = 0, e.rows-1
	for y := 0; y < e.rows; y++ {
		l := e.scr.line(y)
		l.reset()
		l.grow(e.cols, e.cols)
		for x := range l.cells {
			l.cells[x] = 'E'
		}
	}
	e.x, e.y = 0, 0
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
	e.x = max(min(e.x, e.cols-1)-n, 0)
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
	e.moveTo(0, 0)
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

func (e *Emulator) saveCursor() {
	e.scr.saved = cursor{x: e.x, y: e.y, origin: e.modes&modeOrigin != 0, g: e.g, gl: e.gl, set: true}
}

func (e *Emulator) restoreCursor() {
	c := e.scr.saved
	if !c.set {
		c = cursor{}
	}
	e.x, e.y = min(c.x, e.cols), min(c.y, e.rows-1)
	e.g, e.gl = c.g, c.gl
	e.setMode(modeOrigin, c.origin)
}

// enterAlt switches to a fresh alternate screen.
func (e *Emulator) enterAlt(saveCursor bool) {
	if e.alt != nil {
		return
	}
	if saveCursor {
		e.saveCursor()
	}
	e.altFrom = e.y
	e.alt = &screen{lines: make([]line, e.rows)}
	e.scr = e.alt
}

// leaveAlt returns to the main screen and frees the alternate one, so a
// session that ran a full-screen program goes back to costing what an idle
// one does.
func (e *Emulator) leaveAlt(restoreCursor bool) {
	if e.alt == nil {
		return
	}
	e.alt = nil
	e.scr = &e.main
	if restoreCursor {
		e.restoreCursor()
	}
}

func (e *Emulator) softReset() {
	e.modes &^= modeInsert | modeOrigin | modeAppCursor | modeAppKeypad
	e.modes |= modeAutowrap | modeCursorVisible
	e.top, e.bot = 0, e.rows-1
	e.g, e.gl = [2]charset{}, 0
	e.scr.saved = cursor{}
}

func (e *Emulator) fullReset() {
	e.leaveAlt(false)
	e.clearScreen()
	e.main.saved = cursor{}
	e.resetModes()
	e.x, e.y = 0, 0
}

func (e *Emulator) resetModes() {
	e.modes = modeAutowrap | modeCursorVisible
	e.top, e.bot = 0, e.rows-1
	e.g, e.gl = [2]charset{}, 0
	e.tabs = nil
	e.last = 0
}
