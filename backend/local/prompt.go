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
type promptTracker struct {
	nonce []byte
	ps1   []byte

	armed    bool // a valid marker was seen and nothing but a prefix of PS1 followed
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
	t.armed, t.tail, t.code, t.reported = true, t.tail[:0], code, false
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

// text considers printable output; anything beyond the exact prompt cancels
// the evidence until the next marker.
func (t *promptTracker) text(b []byte) {
	if !t.armed || len(b) == 0 {
		return
	}
	if len(t.tail)+len(b) > len(t.ps1) || !bytes.HasPrefix(t.ps1[len(t.tail):], b) {
		t.armed = false
		return
	}
	t.tail = append(t.tail, b...)
}

// complete reports whether the newest marker is followed by exactly PS1.
func (t *promptTracker) complete() bool { return t.armed && len(t.tail) == len(t.ps1) }

func (t *promptTracker) reset() { t.armed, t.reported = false, false }
