package vt

import "unicode/utf8"

// The parser follows the DEC state machine that xterm and tmux implement: C0
// controls inside an escape or control sequence are executed without ending
// it, CAN and SUB cancel a sequence, ESC starts a new one (ESC \ ends a
// string), DEL is ignored. Nothing it records grows with the input: CSI
// parameters saturate, extra ones are dropped, and an OSC longer than
// MaxOSCPayload is discarded up to its terminator.

const (
	bel = 0x07
	can = 0x18
	sub = 0x1a
	esc = 0x1b
	del = 0x7f

	maxParams = 16
	maxParam  = 65535
)

type state uint8

const (
	stGround    state = iota
	stEsc             // after ESC
	stEscInt          // ESC and intermediates 0x20–0x2F
	stCSI             // ESC [ and parameters
	stCSIIgnore       // a malformed CSI, consumed up to its final byte
	stOSC             // ESC ]
	stOSCEsc          // ESC inside an OSC
	stStr             // DCS, SOS, PM or APC: ignored up to ST
	stStrEsc          // ESC inside such a string
)

type parser struct {
	st      state
	seqLast byte // e.last when the current sequence began

	// carry holds an incomplete UTF-8 sequence from the end of the last
	// chunk; only non-empty in the ground state.
	carry [utf8.UTFMax]byte
	nc    int

	params  [maxParams]int
	np      int    // parameters recorded, the current one included
	subs    uint16 // bit i: parameter i followed ':' (a sub-parameter)
	prefix  byte   // a private marker: '?', '>', '<' or '='
	inter   byte   // the last intermediate byte (0x20–0x2F)
	ninter  int
	osc     [MaxOSCPayload]byte
	nosc    int
	oscOver bool
}

func (p *parser) clearSeq() {
	p.np, p.prefix, p.inter, p.ninter, p.subs = 0, 0, 0, 0, 0
	p.params[0] = 0
}

// param returns parameter i, or def when it is absent or zero.
func (p *parser) param(i, def int) int {
	if i < p.np && p.params[i] != 0 {
		return p.params[i]
	}
	return def
}

// ground applies text and controls from b[i:] until the stream enters a
// sequence or the chunk ends, and returns the index of the first unconsumed
// byte.
func (e *Emulator) ground(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			j := i + 1
			for j < len(b) && b[j] >= 0x20 && b[j] < 0x7f {
				j++
			}
			e.printASCII(b[i:j])
			if e.watch {
				e.observe(b[i:j])
			}
			i = j
		case c >= 0x80:
			if len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				e.nc = copy(e.carry[:], b[i:])
				return len(b)
			}
			r, size := utf8.DecodeRune(b[i:])
			e.print(r) // U+FFFD for a rejected byte, size 1
			if e.watch {
				e.observeRune(r)
			}
			i += size
		case c == esc:
			// REP repeats what was printed right before its sequence;
			// after any sequence there is nothing to repeat.
			e.seqLast, e.last = e.last, 0
			e.st = stEsc
			return i + 1
		default:
			e.control(c)
			i++
		}
	}
	return i
}

// sequence consumes b[i:] inside a sequence until the stream returns to
// the ground state or the chunk ends. Each state has its step, which
// takes the byte at i (the string states a run of them) and returns the
// index of the next byte to read: i itself when the byte ends the
// sequence and belongs to what follows.
func (e *Emulator) sequence(b []byte, i int) int {
	for i < len(b) && e.st != stGround {
		switch e.st {
		case stEsc:
			i = e.escByte(b, i)
		case stEscInt:
			i = e.escIntByte(b, i)
		case stCSI:
			i = e.csiByte(b[i], i)
		case stCSIIgnore:
			i = e.csiIgnoreByte(b[i], i)
		case stOSC:
			i = e.oscString(b, i)
		case stStr:
			i = e.ignoredString(b, i)
		case stOSCEsc, stStrEsc:
			i = e.stringEsc(b, i)
		}
	}
	return i
}

// escByte is the step after ESC.
func (e *Emulator) escByte(b []byte, i int) int {
	switch c := b[i]; {
	case c == '[':
		e.clearSeq()
		e.st = stCSI
	case c == ']':
		e.nosc, e.oscOver = 0, false
		e.st = stOSC
	case c == 'P' || c == 'X' || c == '^' || c == '_':
		e.st = stStr
	case c >= 0x20 && c <= 0x2f:
		e.clearSeq()
		e.inter, e.ninter = c, 1
		e.st = stEscInt
	case c >= 0x30 && c <= 0x7e:
		e.st = stGround
		e.escDispatch(0, c)
	case c == esc, c == del:
	case c == can || c == sub:
		e.st = stGround
	case c < 0x20:
		e.control(c)
	default: // a non-ASCII byte ends the sequence and is text
		e.st = stGround
		return i
	}
	return i + 1
}

// escIntByte is the step after ESC and an intermediate byte.
func (e *Emulator) escIntByte(b []byte, i int) int {
	switch c := b[i]; {
	case c >= 0x20 && c <= 0x2f:
		e.ninter++
	case c >= 0x30 && c <= 0x7e:
		e.st = stGround
		if e.ninter == 1 {
			e.escDispatch(e.inter, c)
		}
	case c == esc:
		e.st = stEsc
	case c == del:
	case c == can || c == sub:
		e.st = stGround
	case c < 0x20:
		e.control(c)
	default:
		e.st = stGround
		return i
	}
	return i + 1
}

// csiByte is the step inside a CSI: parameters, a private marker,
// intermediates, and the final byte that dispatches it (csi.go). DEL and
// non-ASCII bytes are ignored.
func (e *Emulator) csiByte(c byte, i int) int {
	switch {
	case c >= '0' && c <= '9':
		if e.ninter > 0 {
			e.st = stCSIIgnore
			break
		}
		if e.np == 0 {
			e.np = 1
		}
		if v := &e.params[e.np-1]; *v < maxParam {
			*v = min(*v*10+int(c-'0'), maxParam)
		}
	case c == ';' || c == ':':
		if e.ninter > 0 {
			e.st = stCSIIgnore
			break
		}
		if e.np == 0 {
			e.np = 1
		}
		if e.np < maxParams {
			e.params[e.np] = 0
			if c == ':' {
				e.subs |= 1 << e.np
			}
			e.np++
		} else {
			// Extra parameters are dropped: the last slot takes
			// them in turn and no dispatch reads that far.
			e.params[e.np-1] = 0
		}
	case c >= 0x3c && c <= 0x3f:
		if e.np > 0 || e.prefix != 0 || e.ninter > 0 {
			e.st = stCSIIgnore
			break
		}
		e.prefix = c
	case c >= 0x20 && c <= 0x2f:
		e.inter = c
		e.ninter++
	case c >= 0x40 && c <= 0x7e:
		e.st = stGround
		if e.ninter <= 1 {
			e.csiDispatch(c)
		}
	case c == esc:
		e.st = stEsc
	case c == can || c == sub:
		e.st = stGround
	case c < 0x20:
		e.control(c)
	}
	return i + 1
}

// csiIgnoreByte is the step inside a malformed CSI, consumed up to its
// final byte.
func (e *Emulator) csiIgnoreByte(c byte, i int) int {
	switch {
	case c >= 0x40 && c <= 0x7e, c == can, c == sub:
		e.st = stGround
	case c == esc:
		e.st = stEsc
	case c < 0x20:
		e.control(c)
	}
	return i + 1
}

// oscString records an OSC's payload up to its terminator, without the
// C0 controls a terminal ignores there; a payload longer than
// MaxOSCPayload is marked and later dropped.
func (e *Emulator) oscString(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case bel:
			e.st = stGround
			e.oscDispatch(false)
			return i + 1
		case esc:
			e.st = stOSCEsc
			return i + 1
		case can, sub:
			e.st = stGround
			return i + 1
		default:
			if c < 0x20 {
				continue
			}
			if e.nosc < MaxOSCPayload {
				e.osc[e.nosc] = c
				e.nosc++
			} else {
				e.oscOver = true
			}
		}
	}
	return i
}

// ignoredString skips a DCS, SOS, PM or APC up to its terminator.
func (e *Emulator) ignoredString(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case esc:
			e.st = stStrEsc
			return i + 1
		case can, sub:
			e.st = stGround
			return i + 1
		}
	}
	return i
}

// stringEsc is the step after ESC inside a string: "\" ends it (an OSC is
// then dispatched), anything else abandons it and continues a new escape
// sequence.
func (e *Emulator) stringEsc(b []byte, i int) int {
	if b[i] != '\\' {
		e.st = stEsc
		return i
	}
	osc := e.st == stOSCEsc
	e.st = stGround
	if osc {
		e.oscDispatch(true)
	}
	return i + 1
}

// control executes a C0 control.
func (e *Emulator) control(c byte) {
	e.last, e.seqLast = 0, 0
	if e.watch {
		e.observeControl(c)
	}
	switch c {
	case '\b':
		e.backspace()
	case '\t':
		e.tab(1)
	case '\n', '\v', '\f':
		e.index()
		if e.modes&modeLNM != 0 {
			e.x = 0
		}
	case '\r':
		e.x = 0
	case 0x0e: // SO
		e.gl = 1
	case 0x0f: // SI
		e.gl = 0
	}
	// NUL, BEL, DEL and the rest mean nothing to the screen.
}

func (e *Emulator) escDispatch(inter, c byte) {
	switch inter {
	case 0:
		switch c {
		case '7':
			e.saveCursor()
		case '8':
			e.restoreCursor()
		case 'D':
			e.index()
		case 'E':
			e.x = 0
			e.index()
		case 'M':
			e.reverseIndex()
		case 'H':
			e.setTab()
		case 'c':
			e.fullReset()
		case '=':
			e.modes |= modeAppKeypad
		case '>':
			e.modes &^= modeAppKeypad
		}
	case '(', ')':
		g := 0
		if inter == ')' {
			g = 1
		}
		switch c {
		case '0':
			e.g[g] = charsetGraphics
		default:
			e.g[g] = charsetASCII
		}
	case '#':
		if c == '8' {
			e.alignmentTest()
		}
	}
}
