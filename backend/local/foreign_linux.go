//go:build linux

package local

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"golang.org/x/sys/unix"
)

var _ backend.ForeignInputClearer = (*session)(nil)

// clearLine empties readline's buffer silently, from whatever state a
// person's keys or a terminal's answers left it in: C-g aborts a key
// sequence in progress (after a lone ESC it is M-C-g, abort; it also ends
// a numeric argument or an incremental search); ESC [201~ ends a
// bracketed paste left open, in which every other key would be text
// (outside one readline rings and inserts "~"); C-g again aborts what
// that sequence left; then beginning of line and kill to its end (C-u
// would ring on an empty line). A quoted insert (C-v) pending takes the
// first C-g as text, which the kill takes too. Each state is checked
// against the real bash (TestClearLineFromAnyState).
var clearLine = []byte("\x07\x1b[201~\x07\x01\x0b")

// ClearForeignInput implements backend.ForeignInputClearer. Foreign input
// shows two ways: bytes still in the terminal's input queue, and a line
// in readline's buffer, which readline echoes after the prompt. The cheap
// looks come first (a poll, the line after the prompt); only when one finds
// something (or on a retry) does the kernel have to prove the shell waits
// at its prompt, since a program reading the terminal would be the
// input's rightful reader, and a shell still reading holds bytes it has
// not echoed yet, which would end up in front of the send's line.
//
// The prompt tracker says what readline echoed after the prompt only
// until readline redraws its line (a resize's SIGWINCH, a list of
// possible completions, C-l): it follows the shell's marker, and a redraw
// prints the prompt without one. A prompt the tracker lost is no proof
// that the shell is elsewhere: when the cursor's line on the screen
// starts with the prompt, or a person's keys were the last input (which
// may have left nothing visible: an ESC, an open paste), the kernel is
// asked all the same, and the line is read from the screen. The keys are
// written only to readline itself: the shell waiting in its own read with
// the terminal in readline's mode (no canonical mode, no echo), never to
// the read builtin, which reads a canonical line.
func (s *session) ClearForeignInput(retry bool) (string, []byte, bool) {
	if s.lineOpen.Load() {
		return "", nil, false // the caller's own unfinished line
	}
	person := s.personInput.Load()
	s.mu.Lock()
	typed, _, atPrompt := s.prompt.editorLine()
	_, _, onScreen := s.screenPromptLine()
	s.mu.Unlock()
	if !atPrompt && !onScreen && !person {
		return "", nil, false
	}
	if pgid, err := s.Foreground(); err != nil || pgid != s.PID() {
		return "", nil, false
	}
	// Answers still waiting to be written answer a program that is gone
	// (its queries were parsed before the prompt): written now, they
	// would be typed ahead of the send.
	dropped := s.dropReplies()
	if !retry && atPrompt && !person && typed == "" && dropped == "" && s.inputConsumed() {
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
	if !s.lineEditorMode() {
		return quoteForeign(queued, false), nil, false // the read builtin's line, or no line editor
	}
	// The shell waits in readline with everything it read echoed and
	// parsed: its line is the editor's whole buffer, as the screen shows
	// it (the tracker's text is the echo as it came, erasures and
	// redraws included); the tracker's where the screen shows no prompt
	// line (a byte echoed before the prompt: "#$ #").
	s.mu.Lock()
	typed, long, onScreen := s.screenPromptLine()
	if !onScreen {
		typed, long, _ = s.prompt.editorLine()
	}
	s.mu.Unlock()
	return quoteForeign(typed+queued, long), clearLine, false
}

// screenPromptLine reads the cursor's logical line on the screen: whether
// it starts with the prompt, and the text after it (trailing blanks
// trimmed; long: cut at maxForeign). Called under mu.
func (s *session) screenPromptLine() (text string, long, ok bool) {
	if s.screen.AltScreen() {
		return "", false, false
	}
	i, _ := s.screen.CursorLine()
	lines, _ := s.screen.TailFrom(i)
	if len(lines) == 0 {
		return "", false, false
	}
	line := strings.TrimRight(lines[0], " ")
	if line == strings.TrimRight(PromptText, " ") {
		return "", false, true
	}
	text, ok = strings.CutPrefix(line, PromptText)
	if !ok {
		return "", false, false
	}
	if len(text) > maxForeign {
		text, long = text[:textcut.Head(text, maxForeign)], true
	}
	return text, long, true
}

// lineEditorMode reports whether the terminal is in readline's mode:
// canonical mode and echo off (readline echoes itself) and CR not mapped
// to NL (readline tells them apart). The read builtin reads in canonical
// mode; read -n and -s turn canonical mode or echo off but keep the CR
// mapping. One ioctl on our handle on the pts.
func (s *session) lineEditorMode() bool {
	s.slave.mu.RLock()
	defer s.slave.mu.RUnlock()
	if s.slave.fd < 0 {
		return false
	}
	t, err := unix.IoctlGetTermios(s.slave.fd, unix.TCGETS)
	return err == nil && t.Lflag&(unix.ICANON|unix.ECHO) == 0 && t.Iflag&unix.ICRNL == 0
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
