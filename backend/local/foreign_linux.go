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
// something does the kernel have to prove the shell waits at its prompt,
// since a program reading the terminal would be the input's rightful
// reader.
func (s *session) ClearForeignInput() (string, []byte) {
	if s.lineOpen.Load() {
		return "", nil // the caller's own unfinished line
	}
	s.mu.Lock()
	typed, long, atPrompt := s.prompt.editorLine()
	s.mu.Unlock()
	if !atPrompt {
		return "", nil
	}
	if pgid, err := s.Foreground(); err != nil || pgid != s.PID() {
		return "", nil
	}
	// Answers still waiting to be written answer a program that is gone
	// (its queries were parsed before the prompt): written now, they
	// would be typed ahead of the send.
	dropped := s.dropReplies()
	if typed == "" && dropped == "" && s.inputConsumed() {
		return "", nil
	}
	queued := dropped + s.takeQueuedInput()
	var keys []byte
	if typed != "" {
		// The line editor holds it: the shell must be the one waiting.
		obs, err := s.ProbeStdin()
		if err != nil || !obs.Supported || !obs.Shell || !obs.Waiting {
			return quoteForeign(queued, false), nil
		}
		keys = clearLine
	}
	return quoteForeign(typed+queued, long), keys
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
