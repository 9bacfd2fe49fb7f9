package local

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// PromptText is the controlled PS1. It is re-asserted at every prompt, so an
// override heals on the next one.
const PromptText = "$ "

// markerPrefix starts the OSC payload of the prompt marker:
// "133;D;<exit status>;<nonce>".
const markerPrefix = "133;D;"

func newNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// promptCommand returns the shell's PROMPT_COMMAND, which carries no
// secret: the nonce comes on descriptor nonceFD, a pipe holding nothing
// else, which the first run reads and closes. The nonce is then in the
// shell's memory only: never in an environment (the shell's initial one
// stays readable in /proc/<pid>/environ whatever it unsets), an argv, or a
// descriptor a program could reopen through /proc. The first run also
// takes PS1 and PROMPT_COMMAND out of the environment children inherit and
// replaces itself with the lean per-prompt form: print the marker with the
// last status and the nonce, and re-assert PS1 so an override heals at the
// next prompt. Every builtin in the per-prompt form costs bash time on
// every command, which is why the one-time work is not repeated.
func promptCommand(nonceFD int) string {
	fd := strconv.Itoa(nonceFD)
	return `__ptyactor_s=$?; export -n PS1 PROMPT_COMMAND; bind 'set enable-bracketed-paste off' 2>/dev/null; ` +
		`IFS= read -r __ptyactor_n <&` + fd + `; exec ` + fd + `<&-; ` +
		`PROMPT_COMMAND='` + promptEvery(`'"$__ptyactor_n"'`) + `'; ` +
		`printf "\033]133;D;%s;%s\007" "$__ptyactor_s" "$__ptyactor_n"; PS1="` + PromptText + `"; unset __ptyactor_s __ptyactor_n`
}

func promptEvery(nonce string) string {
	// "$?" is expanded before printf runs, so it is the last command's
	// status; bash restores $? after PROMPT_COMMAND for the user.
	return `printf "\033]133;D;%s;` + nonce + `\007" "$?"; PS1="` + PromptText + `"`
}

// promptTracker applies the marker rules to what the terminal emulator
// parses (it is the emulator's OSC and Text observer, vt.Options): the
// newest marker with the right nonce, followed by exactly the controlled
// prompt, even when marker and prompt arrive in different reads. A marker
// without the nonce is plain output (and its OSC is stripped like any
// other). The emulator hands it text only while it is armed, so output
// between prompts costs it nothing.
//
// One exception: bash prints its job notices ("[1]+  Done  true") after
// PROMPT_COMMAND and before PS1, so whole notice lines may come between
// the marker and the prompt. Without it, a background job that ended
// would cost the next send its exit status. Any other text, and anything
// after a complete prompt (typed-ahead input echoed by readline, output of
// a later command), cancels the evidence until the next marker.
//
// A line ends at LF, at CR LF, and at a CR followed by anything else that
// prints or is executed (a CR stays pending until then, so a CR LF split
// across reads is one line end). NUL, BEL, CAN, SUB and DEL mean nothing
// here; other controls (TAB, BS, ...) are part of the line.
type promptTracker struct {
	nonce []byte
	ps1   []byte

	armed    bool   // a valid marker was seen and nothing but notices and the current line followed
	line     []byte // the current line since the marker or the last notice, at most lineHead bytes
	long     bool   // the current line is longer than lineHead
	cr       bool   // a CR whose line end the next output decides
	code     int
	reported bool // the completed evidence was already reported
}

// lineHead is as much of a line as the tracker keeps: enough for the
// prompt, a job notice's "[<job>]<c> " head, and what the line editor
// echoed after the prompt (editorLine) up to maxForeign.
const lineHead = 2 + maxForeign

// maxForeign bounds the foreign input kept for a send's report.
const maxForeign = 256

func newPromptTracker(nonce string) *promptTracker {
	return &promptTracker{nonce: []byte(nonce), ps1: []byte(PromptText)}
}

// osc considers one OSC payload (vt.Options.OSC) and reports whether it
// wants the text printed next.
func (t *promptTracker) osc(payload []byte) bool {
	code, ok := t.parse(payload)
	if !ok {
		if t.armed && t.cr {
			// Whatever the OSC was, it came after the CR: the line ended.
			t.cr = false
			t.endLine()
		}
		return t.armed
	}
	t.armed, t.line, t.long, t.cr, t.code, t.reported = true, t.line[:0], false, false, code, false
	return true
}

func (t *promptTracker) parse(p []byte) (int, bool) {
	rest, ok := bytes.CutPrefix(p, []byte(markerPrefix))
	if !ok {
		return 0, false
	}
	status, nonce, ok := bytes.Cut(rest, []byte{';'})
	if !ok || !bytes.Equal(nonce, t.nonce) {
		return 0, false
	}
	code, err := strconv.Atoi(string(status))
	if err != nil || code < 0 || code > 255 {
		return 0, false
	}
	return code, true
}

// text considers what is printed after a marker (vt.Options.Text: text,
// or one executed control): every line that ends before the prompt must
// be a job notice. It reports whether it wants more.
func (t *promptTracker) text(b []byte) bool {
	if !t.armed {
		return false
	}
	if len(b) == 1 {
		switch b[0] {
		case 0x00, 0x07, 0x18, 0x1a, 0x7f: // NUL, BEL, CAN, SUB, DEL
			return true
		case '\n':
			t.cr = false
			return t.endLine()
		}
	}
	if t.cr {
		t.cr = false
		if !t.endLine() {
			return false
		}
	}
	if len(b) == 1 && b[0] == '\r' {
		t.cr = true
		return true
	}
	if room := lineHead - len(t.line); len(b) > room {
		t.line, t.long = append(t.line, b[:room]...), true
	} else {
		t.line = append(t.line, b...)
	}
	return true
}

// endLine ends the current line: a job notice keeps the marker's
// evidence, anything else cancels it. It reports whether the tracker is
// still armed.
func (t *promptTracker) endLine() bool {
	if !jobNotice(t.line) {
		t.armed = false
		return false
	}
	t.line, t.long = t.line[:0], false
	return true
}

// jobNotice reports whether line starts like bash's job notice:
// "[<job number>]<+, - or space> ".
func jobNotice(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte{'['})
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && i+3 <= len(rest) && rest[i] == ']' &&
		(rest[i+1] == '+' || rest[i+1] == '-' || rest[i+1] == ' ') && rest[i+2] == ' '
}

// complete reports whether the newest marker is followed by exactly PS1
// (after job notices, if any).
func (t *promptTracker) complete() bool {
	return t.armed && !t.long && bytes.Equal(t.line, t.ps1)
}

func (t *promptTracker) reset() { t.armed, t.reported = false, false }

// editorLine reports whether the newest marker was followed by the prompt
// and nothing but text on the prompt's line, and that text: what the
// shell's line editor echoed of its buffer. long says it was cut.
func (t *promptTracker) editorLine() (text string, long, ok bool) {
	rest, ok := bytes.CutPrefix(t.line, t.ps1)
	if !t.armed || !ok {
		return "", false, false
	}
	return string(rest), t.long, true
}
