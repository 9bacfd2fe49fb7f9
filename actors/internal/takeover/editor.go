package takeover

import (
	"strconv"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

// lineEditor follows what a person types closely enough to tell the
// agent the lines they submitted: printable text, Backspace, C-u, C-w,
// C-c (the line is abandoned), Enter; escape sequences (arrows, function
// keys) and other control keys are left out. Typed at a secret prompt,
// only the count is kept. Keys arrive in chunks of any size (the live
// view sends each key as its own message; Control.Type may cut anywhere),
// so a character or an escape sequence cut between two chunks is kept
// until it is whole. What it cannot follow exactly it only has to name:
// the hand-back's line is discarded before the agent's next send
// whatever it was (backend/local's clear).
type lineEditor struct {
	line      []rune
	secretLen int
	secret    bool
	esc       int    // 0: none; 1: after ESC; 2: in a CSI or SS3 sequence
	seq       []byte // the escape sequence so far (pending, if unfinished)
	paste     bool   // inside a bracketed paste (ESC [200~ until ESC [201~): Enter is text
	partial   []byte // the start of a UTF-8 character cut by the chunk's end
}

// maxLineRunes bounds a line the editor keeps.
const maxLineRunes = 4096

func (e *lineEditor) feed(p []byte, secret bool) []messages.TypedLine {
	var out []messages.TypedLine
	if secret {
		e.secret = true
	}
	if len(e.partial) > 0 {
		p = append(e.partial, p...)
		e.partial = nil
	}
	for len(p) > 0 {
		if !utf8.FullRune(p) {
			e.partial = append([]byte(nil), p...)
			break
		}
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		if r == 0x03 {
			// C-c: the terminal's interrupt, whatever the line editor
			// was in the middle of.
			e.reset()
			continue
		}
		if e.esc > 0 {
			e.escape(r)
			continue
		}
		if r == 0x1b {
			e.esc, e.seq = 1, append(e.seq[:0], 0x1b)
			continue
		}
		if e.paste {
			// Pasted text is inserted as it is, line ends included.
			if r >= 0x20 || r == '\t' || r == '\n' || r == '\r' {
				e.insert(r, secret)
			}
			continue
		}
		if line, ok := e.key(r, secret); ok {
			out = append(out, line)
		}
	}
	return out
}

// key takes one key outside an escape sequence or a paste: Enter
// submits the line (returned), Backspace, C-u and C-w edit it, printable
// text is inserted, other control keys are left out.
func (e *lineEditor) key(r rune, secret bool) (messages.TypedLine, bool) {
	switch r {
	case '\r', '\n':
		line := messages.TypedLine{Text: string(e.line), Len: len(string(e.line))}
		if e.secret {
			line = messages.TypedLine{Secret: true, Len: e.secretLen + len(string(e.line))}
		}
		e.reset()
		return line, true
	case 0x7f, 0x08:
		if secret && e.secretLen > 0 {
			e.secretLen--
		} else if len(e.line) > 0 {
			e.line = e.line[:len(e.line)-1]
		}
	case 0x15:
		e.line, e.secretLen = e.line[:0], 0
	case 0x17:
		i := len(e.line)
		for i > 0 && e.line[i-1] == ' ' {
			i--
		}
		for i > 0 && e.line[i-1] != ' ' {
			i--
		}
		e.line = e.line[:i]
	default:
		if r >= 0x20 {
			e.insert(r, secret)
		}
	}
	return messages.TypedLine{}, false
}

// escape takes one rune of an escape sequence: ESC and one key (a meta
// key), or a CSI or SS3 sequence up to its final byte. The bracketed
// paste's marks are the only ones it acts on.
func (e *lineEditor) escape(r rune) {
	if len(e.seq) < 32 {
		e.seq = utf8.AppendRune(e.seq, r)
	}
	switch {
	case e.esc == 1 && (r == '[' || r == 'O'):
		e.esc = 2
		return
	case e.esc == 2 && (r < 0x40 || r > 0x7e):
		return
	}
	switch string(e.seq) {
	case "\x1b[200~":
		e.paste = true
	case "\x1b[201~":
		e.paste = false
	}
	e.esc, e.seq = 0, e.seq[:0]
}

func (e *lineEditor) insert(r rune, secret bool) {
	if secret {
		e.secretLen++
	} else if len(e.line) < maxLineRunes {
		e.line = append(e.line, r)
	}
}

func (e *lineEditor) reset() {
	e.line, e.secretLen, e.secret = e.line[:0], 0, false
	e.esc, e.seq, e.paste = 0, e.seq[:0], false
}

// pending is the unsubmitted line ("" for one typed at a secret prompt),
// with what makes it more than its text, Go-quoted: an unfinished escape
// sequence or character at its end ("git pu\\x1b["), the mark of a paste
// still open at its start ("\\x1b[200~echo pasted").
func (e *lineEditor) pending() string {
	if e.secret {
		return ""
	}
	s := string(e.line)
	if e.paste {
		s = `\x1b[200~` + s
	}
	if tail := string(e.seq) + string(e.partial); tail != "" {
		q := strconv.Quote(tail)
		s += q[1 : len(q)-1]
	}
	return s
}
