package vt

// The control sequences (CSI) the emulator acts on, one line each, found
// by final byte, private marker and intermediate, as tmux's
// input_csi_table is. The rest change nothing the emulator keeps and are
// not listed. n is the first parameter, 1 when absent or zero.
var csiTable = [...]csiEntry{
	{'@', 0, 0, func(e *Emulator, n int) { e.insertBlanks(n) }},                     // ICH
	{'A', 0, 0, func(e *Emulator, n int) { e.cursorUp(n) }},                         // CUU
	{'B', 0, 0, func(e *Emulator, n int) { e.cursorDown(n) }},                       // CUD
	{'C', 0, 0, func(e *Emulator, n int) { e.cursorForward(n) }},                    // CUF
	{'D', 0, 0, func(e *Emulator, n int) { e.cursorBack(n) }},                       // CUB
	{'E', 0, 0, func(e *Emulator, n int) { e.cursorDown(n); e.x = 0 }},              // CNL
	{'F', 0, 0, func(e *Emulator, n int) { e.cursorUp(n); e.x = 0 }},                // CPL
	{'G', 0, 0, (*Emulator).column},                                                 // CHA
	{'H', 0, 0, (*Emulator).position},                                               // CUP
	{'I', 0, 0, func(e *Emulator, n int) { e.tab(n) }},                              // CHT
	{'J', 0, 0, func(e *Emulator, _ int) { e.eraseDisplay(e.param(0, 0)) }},         // ED
	{'K', 0, 0, func(e *Emulator, _ int) { e.eraseLine(e.param(0, 0)) }},            // EL
	{'L', 0, 0, func(e *Emulator, n int) { e.insertLines(n) }},                      // IL
	{'M', 0, 0, func(e *Emulator, n int) { e.deleteLines(n) }},                      // DL
	{'P', 0, 0, func(e *Emulator, n int) { e.deleteChars(n) }},                      // DCH
	{'S', 0, 0, func(e *Emulator, n int) { e.scrollUp(n) }},                         // SU
	{'T', 0, 0, func(e *Emulator, n int) { e.scrollDown(n) }},                       // SD
	{'X', 0, 0, func(e *Emulator, n int) { e.eraseChars(n) }},                       // ECH
	{'Z', 0, 0, func(e *Emulator, n int) { e.backTab(n) }},                          // CBT
	{'`', 0, 0, (*Emulator).column},                                                 // HPA
	{'a', 0, 0, func(e *Emulator, n int) { e.cursorForward(n) }},                    // HPR
	{'b', 0, 0, func(e *Emulator, n int) { e.repeat(n, e.seqLast) }},                // REP
	{'c', 0, 0, func(e *Emulator, _ int) { e.answer(replyDA1) }},                    // DA1
	{'c', '>', 0, func(e *Emulator, _ int) { e.answer(replyDA2) }},                  // DA2
	{'d', 0, 0, (*Emulator).row},                                                    // VPA
	{'e', 0, 0, func(e *Emulator, n int) { e.cursorDown(n) }},                       // VPR
	{'f', 0, 0, (*Emulator).position},                                               // HVP
	{'g', 0, 0, func(e *Emulator, _ int) { e.clearTabs(e.param(0, 0)) }},            // TBC
	{'h', 0, 0, func(e *Emulator, _ int) { e.setModes(e.setANSIMode, true) }},       // SM
	{'h', '?', 0, func(e *Emulator, _ int) { e.setModes(e.setPrivateMode, true) }},  // DECSET
	{'l', 0, 0, func(e *Emulator, _ int) { e.setModes(e.setANSIMode, false) }},      // RM
	{'l', '?', 0, func(e *Emulator, _ int) { e.setModes(e.setPrivateMode, false) }}, // DECRST
	{'m', 0, 0, (*Emulator).sgr},                                                    // SGR
	{'n', 0, 0, (*Emulator).statusReport},                                           // DSR
	{'n', '?', 0, (*Emulator).privateStatusReport},                                  // DECXCPR
	{'p', 0, '!', func(e *Emulator, _ int) { e.softReset() }},                       // DECSTR
	{'p', 0, '$', func(e *Emulator, _ int) { e.reportMode(false, e.param(0, 0)) }},  // DECRQM
	{'p', '?', '$', func(e *Emulator, _ int) { e.reportMode(true, e.param(0, 0)) }}, // DECRQM, DEC modes
	{'p', '>', '$', func(e *Emulator, _ int) { e.reportMode(false, e.param(0, 0)) }},
	{'q', 0, ' ', (*Emulator).cursorStyle},                                                       // DECSCUSR
	{'r', 0, 0, func(e *Emulator, _ int) { e.setRegion(e.param(0, 1)-1, e.param(1, e.rows)-1) }}, // DECSTBM
	{'s', 0, 0, func(e *Emulator, _ int) { e.saveCursor() }},                                     // SCOSC
	{'t', 0, 0, (*Emulator).windowReport},                                                        // XTWINOPS
	{'u', 0, 0, func(e *Emulator, _ int) { e.restoreCursor() }},                                  // SCORC
}

// A csiEntry is a sequence by its final byte, private marker ('?', '>'
// or none) and one intermediate byte (or none), and what it does.
type csiEntry struct {
	final, prefix, inter byte
	run                  func(e *Emulator, n int)
}

// csiIndex finds a csiTable entry (its index + 1, 0 for none) by marker,
// intermediate and final byte without a search: every sequence with
// parameters costs one look-up, colour output included.
var csiIndex = func() (ix [3][17][0x3f]uint8) {
	for i, c := range csiTable {
		p, _ := prefixSlot(c.prefix)
		ix[p][interSlot(c.inter)][c.final-0x40] = uint8(i + 1)
	}
	return ix
}()

func prefixSlot(p byte) (int, bool) {
	switch p {
	case 0:
		return 0, true
	case '?':
		return 1, true
	case '>':
		return 2, true
	}
	return 0, false
}

func interSlot(c byte) int {
	if c == 0 {
		return 0
	}
	return 1 + int(c-0x20)
}

// csiDispatch runs the sequence just ended by final (0x40–0x7E), with at
// most one intermediate byte.
func (e *Emulator) csiDispatch(final byte) {
	if final == 'm' && e.prefix == 0 && e.ninter == 0 {
		e.sgr(0) // most sequences of colour output: a direct call
		return
	}
	p, ok := prefixSlot(e.prefix)
	if !ok {
		return
	}
	inter := byte(0)
	if e.ninter == 1 {
		inter = e.inter
	}
	if k := csiIndex[p][interSlot(inter)][final-0x40]; k != 0 {
		csiTable[k-1].run(e, e.param(0, 1))
	}
}

// answer sends a fixed reply to a query whose parameter is absent or 0.
func (e *Emulator) answer(reply []byte) {
	if e.param(0, 0) == 0 {
		e.send(reply)
	}
}

// column is CHA and HPA.
func (e *Emulator) column(n int) { e.x = min(n, e.cols) - 1 }

// row is VPA, which keeps the column, even the pending-wrap one.
func (e *Emulator) row(n int) {
	x := e.x
	e.moveTo(n-1, 0)
	e.x = x
}

// position is CUP and HVP.
func (e *Emulator) position(int) { e.moveTo(e.param(0, 1)-1, e.param(1, 1)-1) }

// setModes sets or resets every mode the sequence names.
func (e *Emulator) setModes(set func(n int, on bool), on bool) {
	for i := 0; i < max(e.np, 1); i++ {
		set(e.params[i], on)
	}
}

// statusReport answers DSR 5 (status) and DSR 6 (the cursor's position).
func (e *Emulator) statusReport(int) {
	switch e.param(0, 0) {
	case 5:
		e.send(replyStatusOK)
	case 6:
		e.reportCursor(false)
	}
}

// privateStatusReport answers DECXCPR (CSI ? 6 n).
func (e *Emulator) privateStatusReport(int) {
	if e.param(0, 0) == 6 {
		e.reportCursor(true)
	}
}

// windowReport answers CSI 18 t with the size. 20 and 21 (icon and window
// title reports) are never answered: they would type program-controlled
// text back as input.
func (e *Emulator) windowReport(int) {
	if e.param(0, 0) == 18 {
		e.reportSize()
	}
}

// cursorStyle is DECSCUSR: 0 or 1 a blinking block, 2 a steady one, 3 and
// 4 underline, 5 and 6 bar; other values are ignored, as in xterm.
func (e *Emulator) cursorStyle(int) {
	if n := e.param(0, 0); n <= 6 {
		e.shape = uint8(n)
	}
}
