package termtext

import (
	"encoding/binary"
	"unicode/utf8"
)

// Sink receives parsed output. Slices are only valid during the call and must
// not be modified.
type Sink interface {
	// Text receives printable text: valid UTF-8, no ESC, no BEL, no CR, line
	// breaks as '\n' only. One logical run may arrive in several calls.
	Text(b []byte)
	// OSC receives the payload of a complete OSC sequence (the bytes between
	// "ESC ]" and its BEL or ST terminator), in stream order relative to Text.
	// Only payloads of at most MaxOSCPayload bytes are reported.
	OSC(payload []byte)
}

// MaxOSCPayload bounds the OSC payloads the parser records and reports. The
// prompt marker is a few dozen bytes; window titles and hyperlinks longer than
// this are of no use to an agent and would only cost memory.
const MaxOSCPayload = 512

const (
	nul = 0x00
	bel = 0x07
	cr  = 0x0d
	can = 0x18
	sub = 0x1a
	esc = 0x1b
	del = 0x7f
)

type state uint8

const (
	stGround state = iota
	stEsc          // after ESC
	stEscInt       // ESC followed by intermediates 0x20–0x2F
	stCSI          // ESC [
	stOSC          // ESC ]
	stOSCEsc       // ESC inside an OSC: "\" terminates it, anything else abandons it
	stStr          // DCS, SOS, PM or APC payload
	stStrEsc       // ESC inside a DCS-like string
)

// Byte classes in the ground state.
const (
	cPass uint8 = iota // emitted unchanged
	cDrop              // removed; a pending CR survives it
	cCR
	cESC
	cHigh // 0x80–0xFF: part of a multi-byte UTF-8 sequence, or malformed
)

var groundClass = func() (t [256]uint8) {
	for c := 0x80; c < 0x100; c++ {
		t[c] = cHigh
	}
	for _, c := range []byte{nul, bel, can, sub, del} {
		t[c] = cDrop
	}
	t[cr] = cCR
	t[esc] = cESC
	return t
}()

// Parser sanitizes one terminal output stream. The zero value is not usable;
// call New. A Parser is not safe for concurrent use.
type Parser struct {
	maxSeq int // 0: no bound beyond MaxOSCPayload

	st      state
	pending bool // a CR whose meaning the next output byte decides

	// carry holds an incomplete UTF-8 sequence from the end of the last chunk;
	// only non-empty in the ground state with no pending CR.
	carry [utf8.UTFMax]byte
	nc    int

	osc  [MaxOSCPayload]byte
	nosc int
	over bool // the current OSC outgrew MaxOSCPayload: discard it

	// scratch backs the bytes the parser produces itself ("\n", U+FFFD) and
	// join a character completed across two chunks. Keeping them in the Parser
	// means handing them to the Sink does not allocate, and a misbehaving Sink
	// cannot corrupt another Parser.
	scratch [utf8.UTFMax]byte
	join    [2 * utf8.UTFMax]byte
}

// New returns a parser in the ground state. maxSeq bounds a control sequence
// (the session's maxReadBytes): an OSC longer than maxSeq bytes, counted from
// its ESC through its terminator, is not reported. Memory does not depend on
// maxSeq: the parser never holds more than MaxOSCPayload bytes of a sequence,
// and discards the rest of any sequence until its terminator. maxSeq < 1 means
// no bound beyond MaxOSCPayload.
func New(maxSeq int) *Parser {
	if maxSeq < 0 {
		maxSeq = 0
	}
	return &Parser{maxSeq: maxSeq}
}

// Feed parses the next chunk of the stream.
func (p *Parser) Feed(chunk []byte, s Sink) {
	i := 0
	if p.nc > 0 {
		i = p.resume(chunk, s)
		if p.nc > 0 {
			return
		}
	}
	for i < len(chunk) {
		if p.st == stGround {
			i = p.ground(chunk, i, s)
		} else {
			i = p.sequence(chunk, i, s)
		}
	}
}

// Flush ends the stream: a pending CR becomes "\n", an incomplete UTF-8
// sequence becomes U+FFFD (one per byte, as utf8.DecodeRune would report it
// had the stream ended there), and an open control sequence is dropped. The
// parser is then back in its initial state and may be reused.
func (p *Parser) Flush(s Sink) {
	p.st, p.nosc, p.over = stGround, 0, false
	p.resolveCR(s)
	for ; p.nc > 0; p.nc-- {
		// A carried sequence is an incomplete prefix, so every byte of it is
		// rejected on its own.
		p.replacement(s)
	}
}

// resume completes the character carried over from the previous chunk. It
// returns how many bytes of chunk it consumed; p.nc stays non-zero only when
// chunk was too short to decide.
func (p *Parser) resume(chunk []byte, s Sink) int {
	n := copy(p.join[:], p.carry[:p.nc])
	k := copy(p.join[n:n+utf8.UTFMax], chunk)
	buf := p.join[:n+k]
	carried := n
	for carried > 0 {
		if !utf8.FullRune(buf) {
			// Still a valid prefix; chunk is entirely in buf.
			p.nc = copy(p.carry[:], buf)
			return len(chunk)
		}
		r, size := utf8.DecodeRune(buf)
		if size > carried {
			p.nc = 0
			s.Text(buf[:size])
			return size - carried
		}
		if r == utf8.RuneError && size == 1 {
			p.replacement(s)
		} else {
			s.Text(buf[:size])
		}
		buf, carried = buf[size:], carried-size
	}
	p.nc = 0
	return 0
}

// ground emits text from b[i:] until the stream enters a control sequence or
// the chunk ends, and returns the index of the first unconsumed byte. Runs of
// bytes that pass unchanged are handed to the Sink as sub-slices of b.
func (p *Parser) ground(b []byte, i int, s Sink) int {
	start := i // b[start:i] passes unchanged and is not yet emitted
	for i < len(b) {
		switch groundClass[b[i]] {
		case cPass, cHigh:
			if p.pending {
				// start == i: a pending CR always flushes the run first.
				p.pending = false
				if b[i] != '\n' {
					p.newline(s)
				}
			}
			i = scanText(b, i)
			if i == len(b) || groundClass[b[i]] != cHigh {
				continue
			}
			// A character the fast scan could not vouch for.
			if len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				emit(s, b[start:i])
				p.nc = copy(p.carry[:], b[i:])
				return len(b)
			}
			if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			emit(s, b[start:i])
			p.replacement(s)
			i++
			start = i
		case cCR:
			emit(s, b[start:i])
			p.resolveCR(s)
			p.pending = true
			i++
			start = i
		case cDrop:
			emit(s, b[start:i])
			i++
			start = i
		case cESC:
			emit(s, b[start:i])
			p.st = stEsc
			return i + 1
		}
	}
	emit(s, b[start:i])
	return i
}

// sequence consumes b[i:] inside a control sequence until the stream returns
// to the ground state or the chunk ends, and returns the index of the first
// unconsumed byte. A byte that abandons a sequence is left unconsumed so the
// ground state handles it.
func (p *Parser) sequence(b []byte, i int, s Sink) int {
	for i < len(b) {
		c := b[i]
		switch p.st {
		case stGround:
			return i
		case stEsc:
			switch {
			case c == '[':
				p.st = stCSI
			case c == ']':
				p.st, p.nosc, p.over = stOSC, 0, false
			case c == 'P' || c == 'X' || c == '^' || c == '_':
				p.st = stStr
			case c >= 0x20 && c <= 0x2f:
				p.st = stEscInt
			case c >= 0x30 && c <= 0x7e:
				p.st = stGround
			case c == esc, c == del:
				// ESC ESC: the first is dropped and the second starts anew.
				// DEL is ignored inside sequences, as a VT parser does.
			default:
				p.st = stGround
				return i
			}
		case stEscInt:
			switch {
			case c >= 0x20 && c <= 0x2f, c == del:
			case c >= 0x30 && c <= 0x7e:
				p.st = stGround
			default:
				p.st = stGround
				return i
			}
		case stCSI:
			// Parameters and intermediates are 0x20–0x3F; a long run of them
			// costs nothing, since nothing is recorded.
			for c >= 0x20 && c <= 0x3f || c == del {
				i++
				if i == len(b) {
					return i
				}
				c = b[i]
			}
			p.st = stGround
			if c < 0x40 || c > 0x7e {
				return i
			}
		case stOSC:
			for c != bel && c != esc && c != can && c != sub {
				p.record(c)
				i++
				if i == len(b) {
					return i
				}
				c = b[i]
			}
			switch c {
			case bel:
				p.endOSC(s, 1)
			case esc:
				p.st = stOSCEsc
			default:
				p.st = stGround
			}
		case stOSCEsc:
			if c == '\\' {
				p.endOSC(s, 2)
			} else {
				p.st = stEsc
				continue // c opens a new sequence
			}
		case stStr:
			for c != esc && c != can && c != sub {
				i++
				if i == len(b) {
					return i
				}
				c = b[i]
			}
			if c == esc {
				p.st = stStrEsc
			} else {
				p.st = stGround
			}
		case stStrEsc:
			if c == '\\' {
				p.st = stGround
			} else {
				p.st = stEsc
				continue
			}
		}
		i++
	}
	return i
}

func (p *Parser) record(c byte) {
	if p.nosc < MaxOSCPayload {
		p.osc[p.nosc] = c
		p.nosc++
	} else {
		p.over = true
	}
}

// endOSC reports the OSC just terminated by a terminator of termLen bytes.
func (p *Parser) endOSC(s Sink, termLen int) {
	p.st = stGround
	if p.over || p.maxSeq > 0 && 2+p.nosc+termLen > p.maxSeq {
		return
	}
	p.resolveCR(s)
	s.OSC(p.osc[:p.nosc])
}

// resolveCR writes out a pending CR as "\n"; the caller has just seen output
// that is not the LF of a CRLF.
func (p *Parser) resolveCR(s Sink) {
	if p.pending {
		p.pending = false
		p.newline(s)
	}
}

func (p *Parser) newline(s Sink) {
	p.scratch[0] = '\n'
	s.Text(p.scratch[:1])
}

func (p *Parser) replacement(s Sink) {
	n := utf8.EncodeRune(p.scratch[:], utf8.RuneError)
	s.Text(p.scratch[:n])
}

// scanText returns the end of the run starting at b[i] that passes unchanged:
// ASCII of class cPass and the common well-formed two- and three-byte
// characters. This is the hot loop of the parser.
func scanText(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if groundClass[c] == cPass {
			if i+8 <= len(b) && printable8(binary.LittleEndian.Uint64(b[i:])) {
				i += 8
			} else {
				i++
			}
			continue
		}
		if c < 0x80 {
			return i
		}
		n := runeLen(b[i:])
		if n == 0 {
			return i
		}
		i += n
	}
	return i
}

// printable8 reports whether all eight bytes packed in v are printable ASCII
// (0x20–0x7E), using the classic SWAR tests for "some byte is below n" and
// "some byte is zero".
func printable8(v uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	x := v ^ (0x7f * lo) // a DEL byte becomes zero
	return (v|(v-0x20*lo)|(x-lo)&^x)&hi == 0
}

// runeLen is a fast path for the common two- and three-byte characters: it
// returns their length when b starts with one that is valid, and 0 when
// utf8.DecodeRune must decide.
func runeLen(b []byte) int {
	if len(b) < 3 {
		return 0
	}
	c0, c1, c2 := b[0], b[1], b[2]
	switch {
	case c0 >= 0xc2 && c0 < 0xe0:
		if c1&0xc0 == 0x80 {
			return 2
		}
	case c0 > 0xe0 && c0 < 0xf0 && c0 != 0xed:
		// E0 (overlongs) and ED (surrogates) restrict the second byte;
		// leave them to utf8.DecodeRune.
		if c1&0xc0 == 0x80 && c2&0xc0 == 0x80 {
			return 3
		}
	}
	return 0
}

func emit(s Sink, b []byte) {
	if len(b) > 0 {
		s.Text(b)
	}
}
