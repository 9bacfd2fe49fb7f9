package vt

// Cursor motion: the moves that stay inside the screen (and the scroll
// region, where the cursor is in it), the margins, and the tab stops.

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
