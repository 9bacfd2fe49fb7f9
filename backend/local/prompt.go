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

// promptCommand returns the shell's PROMPT_COMMAND. Its first run takes
// PS1 and PROMPT_COMMAND out of the environment children inherit (so no
// program can read the nonce from its environment) and replaces itself with
// the lean per-prompt form: print the marker with the last status and the
// nonce, and re-assert PS1 so an override heals at the next prompt. Every
// builtin in the per-prompt form costs bash time on every command, which is
// why the one-time work is not repeated.
func promptCommand(nonce string) string {
	lean := promptEvery(nonce)
	return `export -n PS1 PROMPT_COMMAND; PROMPT_COMMAND='` + lean + `'; ` + lean
}

func promptEvery(nonce string) string {
	// "$?" is expanded before printf runs, so it is the last command's
	// status; bash restores $? after PROMPT_COMMAND for the user.
	return `printf "\033]133;D;%s;` + nonce + `\007" "$?"; PS1="` + PromptText + `"`
}

// promptTracker applies the marker rules to the parsed stream: the newest
// marker with the right nonce, followed by exactly the controlled prompt,
// even when marker and prompt arrive in different reads. A marker without
// the nonce is plain output (and its OSC is stripped like any other).
//
// Whole lines may come between the marker and the prompt: bash prints its
// job notices ("[1]+  Done  true") after PROMPT_COMMAND and before PS1, so
// a background job that ended would otherwise cost the next send its exit
// status. Such lines change nothing the marker proves: the shell finished
// the command and is on its way to the prompt. Anything after a complete
// prompt still cancels the evidence (typed-ahead input echoed by readline,
// output of a later command).
type promptTracker struct {
	nonce []byte
	ps1   []byte

	armed    bool // a valid marker was seen and nothing but whole lines and a prefix of PS1 followed
	other    bool // the current line is not the prompt; only its newline matters
	tail     []byte
	code     int
	reported bool // the completed evidence was already reported
}

func newPromptTracker(nonce string) *promptTracker {
	return &promptTracker{nonce: []byte(nonce), ps1: []byte(PromptText)}
}

// osc considers one OSC payload.
func (t *promptTracker) osc(payload []byte) {
	code, ok := t.parse(payload)
	if !ok {
		return
	}
	t.armed, t.other, t.tail, t.code, t.reported = true, false, t.tail[:0], code, false
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

// text considers printable output. Before the prompt starts, lines that
// are not the prompt are skipped whole; once the prompt is complete,
// anything more cancels the evidence until the next marker.
func (t *promptTracker) text(b []byte) {
	for t.armed && len(b) > 0 {
		if t.other {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				return
			}
			t.other, b = false, b[i+1:]
			continue
		}
		if len(t.tail) == len(t.ps1) {
			t.armed = false
			return
		}
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i]
		}
		n := min(len(line), len(t.ps1)-len(t.tail))
		if !bytes.Equal(t.ps1[len(t.tail):len(t.tail)+n], line[:n]) {
			// Not the prompt: a notice line, skipped through its newline.
			t.other, t.tail = true, t.tail[:0]
			continue
		}
		t.tail, b = append(t.tail, line[:n]...), b[n:]
		if len(b) > 0 && b[0] == '\n' && len(t.tail) < len(t.ps1) {
			// A line that was a strict prefix of the prompt ended.
			t.tail, b = t.tail[:0], b[1:]
		}
	}
}

// complete reports whether the newest marker is followed by exactly PS1.
func (t *promptTracker) complete() bool { return t.armed && len(t.tail) == len(t.ps1) }

func (t *promptTracker) reset() { t.armed, t.other, t.reported = false, false, false }
