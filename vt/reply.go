package vt

import (
	"bytes"
	"strconv"
)

// The answers to queries. The emulator answers what a program needs to know
// to drive a terminal (what it is, where the cursor is, which modes are set,
// which colours it draws with) and nothing that echoes text the program
// chose: window title reports (CSI 20 t, CSI 21 t), clipboard reads (OSC 52),
// DECRQSS and XTGETTCAP (DCS) go unanswered, since a program that can make
// the terminal type its text can make the shell run it.
var (
	// replyDA1 claims a VT220 with ANSI colour, as a modest xterm would.
	replyDA1 = []byte("\x1b[?62;22c")
	// replyDA2 is the secondary attributes: a VT220, firmware version 10.
	replyDA2      = []byte("\x1b[>1;10;0c")
	replyStatusOK = []byte("\x1b[0n")
)

// The colours answered to OSC 10, 11 and 12: light text on a dark
// background, the way most terminals start.
var oscColours = map[int]string{
	10: "rgb:ffff/ffff/ffff",
	11: "rgb:0000/0000/0000",
	12: "rgb:ffff/ffff/ffff",
}

// send hands p to the reply writer. Fixed answers are copied to the
// scratch buffer first, so a writer that scribbles on its slice cannot
// change the next answer.
func (e *Emulator) send(p []byte) {
	if e.reply == nil {
		return
	}
	if len(e.rbuf) == 0 || &p[0] != &e.rbuf[0] {
		e.rbuf = append(e.rbuf[:0], p...)
		p = e.rbuf
	}
	e.reply(p)
}

// reportCursor answers DSR 6 (CPR) or, for DECXCPR, CSI ? 6 n; rows count
// from the top margin in origin mode.
func (e *Emulator) reportCursor(private bool) {
	row := e.y + 1
	if e.modes&modeOrigin != 0 {
		row -= e.top
	}
	b := append(e.rbuf[:0], "\x1b["...)
	if private {
		b = append(b, '?')
	}
	b = strconv.AppendInt(b, int64(row), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(min(e.x, e.cols-1)+1), 10)
	if private {
		b = append(b, ";1"...)
	}
	b = append(b, 'R')
	e.rbuf = b
	e.send(b)
}

// reportMode answers DECRQM.
func (e *Emulator) reportMode(private bool, n int) {
	b := append(e.rbuf[:0], "\x1b["...)
	if private {
		b = append(b, '?')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(e.modeState(private, n)), 10)
	b = append(b, "$y"...)
	e.rbuf = b
	e.send(b)
}

// reportSize answers CSI 18 t with the text area in characters.
func (e *Emulator) reportSize() {
	b := append(e.rbuf[:0], "\x1b[8;"...)
	b = strconv.AppendInt(b, int64(e.rows), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(e.cols), 10)
	b = append(b, 't')
	e.rbuf = b
	e.send(b)
}

// oscDispatch acts on a complete OSC: the observer sees it (observe.go),
// and the colour queries are answered (OSC 10, 11 and 12 with "?",
// several in one sequence as xterm allows), with the terminator the query
// used; setting colours, titles, the clipboard or anything else changes
// nothing shown.
func (e *Emulator) oscDispatch(st bool) {
	if e.oscOver {
		return
	}
	p := e.osc[:e.nosc]
	e.answerColours(p, st)
	e.reportOSC(p)
}

// answerColours answers the colour queries in an OSC payload.
func (e *Emulator) answerColours(p []byte, st bool) {
	if e.reply == nil {
		return
	}
	i := bytes.IndexByte(p, ';')
	if i < 0 {
		return
	}
	n, err := strconv.Atoi(string(p[:i]))
	if err != nil || n < 10 || n > 12 {
		return
	}
	for _, arg := range bytes.Split(p[i+1:], []byte{';'}) {
		if c, ok := oscColours[n]; ok && string(arg) == "?" {
			b := append(e.rbuf[:0], "\x1b]"...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, ';')
			b = append(b, c...)
			if st {
				b = append(b, "\x1b\\"...)
			} else {
				b = append(b, bel)
			}
			e.rbuf = b
			e.send(b)
		}
		n++
	}
}
