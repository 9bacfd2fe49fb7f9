//go:build linux

package local

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/backend"
	"golang.org/x/sys/unix"
)

var _ backend.ForeignInputClearer = (*session)(nil)

// clearLine empties readline's buffer silently: beginning of line, then
// kill to its end (C-u would ring the bell on an empty line).
var clearLine = []byte{0x01, 0x0b}

// ClearForeignInput implements backend.ForeignInputClearer. Foreign input
// shows two ways: bytes still in the terminal's input queue, and a line
// in readline's buffer, which readline echoes after the prompt. The cheap
// looks come first (a poll, the line after the prompt); only when one finds
// something (or on a retry) does the kernel have to prove the shell waits
// at its prompt, since a program reading the terminal would be the
// input's rightful reader, and a shell still reading holds bytes it has
// not echoed yet, which would end up in front of the send's line.
func (s *session) ClearForeignInput(retry bool) (string, []byte, bool) {
	if s.lineOpen.Load() {
		return "", nil, false // the caller's own unfinished line
	}
	s.mu.Lock()
	typed, _, atPrompt := s.prompt.editorLine()
	s.mu.Unlock()
	if !atPrompt {
		return "", nil, false
	}
	if pgid, err := s.Foreground(); err != nil || pgid != s.PID() {
		return "", nil, false
	}
	// Answers still waiting to be written answer a program that is gone
	// (its queries were parsed before the prompt): written now, they
	// would be typed ahead of the send.
	dropped := s.dropReplies()
	if !retry && typed == "" && dropped == "" && s.inputConsumed() {
		return "", nil, false
	}
	queued := dropped + s.takeQueuedInput()
	obs, err := s.ProbeStdin()
	if err != nil || !obs.Supported {
		return quoteForeign(queued, false), nil, false // no proof: no keys
	}
	if !obs.Shell || !obs.Waiting || !obs.InputConsumed || !obs.Drained {
		return quoteForeign(queued, false), nil, true
	}
	// The shell waits with everything it read echoed and parsed: its
	// line is the editor's whole buffer.
	s.mu.Lock()
	typed, long, atPrompt := s.prompt.editorLine()
	s.mu.Unlock()
	if !atPrompt {
		return quoteForeign(queued, false), nil, false
	}
	return quoteForeign(typed+queued, long), clearLine, false
}

// takeQueuedInput reads what waits in the terminal's input queue through
// our own handle on the pts (no controlling-terminal checks apply to it;
// it is non-blocking), so nobody else reads it.
func (s *session) takeQueuedInput() string {
	s.slave.mu.RLock()
	defer s.slave.mu.RUnlock()
	if s.slave.fd < 0 {
		return ""
	}
	var out []byte
	var buf [512]byte
	for len(out) < 64<<10 {
		n, err := unix.Read(s.slave.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		out = append(out, buf[:n]...)
	}
	return string(out)
}

// quoteForeign makes discarded input safe to show: control bytes and
// invalid UTF-8 are quoted as Go escapes, and at most maxForeign bytes are
// kept; cut (or long: cut already) ends with "…".
func quoteForeign(s string, long bool) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for i, r := range s {
		if b.Len() >= maxForeign {
			long = true
			break
		}
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case r < 0x20 || r == 0x7f:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	if long {
		b.WriteString("…")
	}
	return b.String()
}
