package vt

import "unicode/utf8"

// MaxOSCPayload bounds the OSC payloads the parser records, answers and
// reports: a longer one is discarded up to its terminator. The prompt
// marker is a few dozen bytes; titles and hyperlinks longer than this are
// of no use to an agent and would only cost memory.
const MaxOSCPayload = 512

// An observer sees what the one parser finds besides the screen: every
// complete OSC payload (Options.OSC), and, only while it asks for them,
// the characters printed and the controls executed after it (Options.Text).
// A session's prompt tracker reads the shell's marker and the prompt after
// it this way; watching costs nothing while it is off.

// observe hands b to the text observer while it watches.
func (e *Emulator) observe(b []byte) {
	if !e.onText(b) {
		e.watch = false
	}
}

// observeRune hands r, UTF-8 encoded, to the text observer.
func (e *Emulator) observeRune(r rune) {
	var b [utf8.UTFMax]byte
	e.observe(b[:utf8.EncodeRune(b[:], r)])
}

// observeControl hands an executed C0 control to the text observer.
func (e *Emulator) observeControl(c byte) {
	b := [1]byte{c}
	e.observe(b[:])
}

// reportOSC hands a complete OSC payload to the observer, which says
// whether it wants the text printed next.
func (e *Emulator) reportOSC(p []byte) {
	if e.onOSC != nil {
		e.watch = e.onOSC(p) && e.onText != nil
	}
}
