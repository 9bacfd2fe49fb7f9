package vt

// mode is a set of terminal modes.
type mode uint32

const (
	modeAutowrap       mode = 1 << iota // DECAWM (?7)
	modeOrigin                          // DECOM (?6)
	modeInsert                          // IRM (4)
	modeLNM                             // LNM (20): LF also returns the carriage
	modeAppCursor                       // DECCKM (?1)
	modeAppKeypad                       // DECNKM (?66), DECKPAM
	modeBracketedPaste                  // ?2004
	modeCursorVisible                   // DECTCEM (?25)
	modeReverse                         // DECSCNM (?5)
	modeBlink                           // ?12
	modeMouseX10                        // ?9
	modeMouseNormal                     // ?1000
	modeMouseButton                     // ?1002
	modeMouseAny                        // ?1003
	modeFocus                           // ?1004
	modeMouseUTF8                       // ?1005
	modeMouseSGR                        // ?1006
	modeMouseURXVT                      // ?1015
	modeAltScroll                       // ?1007
)

// The mouse modes: one tracking mode and one encoding at a time, as in
// xterm, xterm.js and tmux: setting one turns the others of its group
// off.
const (
	mouseTracking = modeMouseX10 | modeMouseNormal | modeMouseButton | modeMouseAny
	mouseEncoding = modeMouseUTF8 | modeMouseSGR | modeMouseURXVT
)

// privateModes are the DEC private modes the emulator recognizes. The
// mouse, focus and display modes change nothing it shows, but a program
// that sets one may ask for it back with DECRQM.
var privateModes = map[int]mode{
	1:    modeAppCursor,
	5:    modeReverse,
	6:    modeOrigin,
	7:    modeAutowrap,
	9:    modeMouseX10,
	12:   modeBlink,
	25:   modeCursorVisible,
	66:   modeAppKeypad,
	1000: modeMouseNormal,
	1002: modeMouseButton,
	1003: modeMouseAny,
	1004: modeFocus,
	1005: modeMouseUTF8,
	1006: modeMouseSGR,
	1007: modeAltScroll,
	1015: modeMouseURXVT,
	2004: modeBracketedPaste,
}

var ansiModes = map[int]mode{
	4:  modeInsert,
	20: modeLNM,
}

func (e *Emulator) setMode(m mode, on bool) {
	if on {
		e.modes |= m
	} else {
		e.modes &^= m
	}
}

func (e *Emulator) setPrivateMode(n int, on bool) {
	switch n {
	case 47, 1047:
		if on {
			e.enterAlt(false)
		} else {
			e.leaveAlt(false)
		}
		return
	case 1049:
		if on {
			e.enterAlt(true)
		} else {
			e.leaveAlt(true)
		}
		return
	case 1048:
		if on {
			e.saveCursor()
		} else {
			e.restoreCursor()
		}
		return
	case 3:
		// DECCOLM: the column count stays (the size is the session's), but
		// the screen clears and the cursor goes home, as in tmux; `reset`
		// sends it.
		e.moveTo(0, 0)
		e.clearScreen()
		return
	}
	m, ok := privateModes[n]
	if !ok {
		return
	}
	switch {
	case m&mouseTracking != 0:
		// Resetting any tracking mode turns tracking off.
		e.modes &^= mouseTracking
	case m&mouseEncoding != 0 && on:
		e.modes &^= mouseEncoding
	}
	e.setMode(m, on)
	if m == modeOrigin {
		e.moveTo(0, 0)
	}
}

func (e *Emulator) setANSIMode(n int, on bool) {
	if m, ok := ansiModes[n]; ok {
		e.setMode(m, on)
	}
}

// modeState answers DECRQM: 1 set, 2 reset, 0 not recognized.
func (e *Emulator) modeState(private bool, n int) int {
	var m mode
	var ok bool
	if private {
		switch n {
		case 47, 1047, 1049:
			if e.alt != nil {
				return 1
			}
			return 2
		}
		m, ok = privateModes[n]
	} else {
		m, ok = ansiModes[n]
	}
	switch {
	case !ok:
		return 0
	case e.modes&m != 0:
		return 1
	}
	return 2
}
