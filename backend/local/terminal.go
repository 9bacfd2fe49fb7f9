package local

import (
	"fmt"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local/vt"
	"github.com/ptyactor/ptyactor/messages"
	"golang.org/x/sys/unix"
)

var _ backend.Terminal = (*session)(nil)

// The session's terminal emulator (package vt) receives every byte the
// pump reads, after the prompt-marker scan, under the session's lock. It
// holds the screen a person would see, answers the program's queries, and
// its history, bounded as scrollback is, with its screen is the
// transcript every read and send result comes from (transcript.go).
func newScreen(rows, cols int, cfg messages.Config, reply func([]byte)) (*vt.Emulator, error) {
	return vt.New(rows, cols, vt.Options{HistoryLines: cfg.ScrollbackLines, HistoryBytes: cfg.ScrollbackMaxBytes, Reply: reply})
}

// Screen implements backend.Terminal.
func (s *session) Screen() messages.Screen {
	s.mu.Lock()
	sc := s.screen.Screen()
	s.mu.Unlock()
	return messages.Screen{
		Rows: sc.Rows, CursorRow: sc.CursorRow, CursorCol: sc.CursorCol,
		Height: sc.Size.Rows, Width: sc.Size.Cols, AltScreen: sc.AltScreen, Hash: sc.Hash,
	}
}

// Resize implements backend.Terminal: the PTY first (the kernel sends the
// foreground group SIGWINCH), then the screen, which the program redraws.
func (s *session) Resize(rows, cols int) error {
	if rows < vt.MinRows || rows > vt.MaxRows || cols < vt.MinCols || cols > vt.MaxCols {
		return messages.InvalidArgument("terminal size %dx%d out of range (rows %d-%d, cols %d-%d)",
			rows, cols, vt.MinRows, vt.MaxRows, vt.MinCols, vt.MaxCols)
	}
	err := control(s.master, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
	if err != nil {
		return fmt.Errorf("%w: resize: %w", messages.ErrTransport, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.Resize(rows, cols)
}

// InputModes implements backend.Terminal.
func (s *session) InputModes() (appCursor, bracketedPaste, altScreen bool) {
	s.mu.Lock()
	m, alt := s.screen.Modes(), s.screen.AltScreen()
	s.mu.Unlock()
	return m.AppCursor, m.BracketedPaste, alt
}

// queueReply takes a query's answer from the emulator (under mu, on the
// pump) and has it written to the terminal without blocking the pump: a
// writer goroutine starts when answers wait and ends when none do, so an
// idle session holds none. It writes through the master's one write path,
// after (never inside) input the runtime is writing, and the exact tier
// sees the answer in the input queue until the program reads it.
func (s *session) queueReply(p []byte) {
	s.replyMu.Lock()
	s.replies = append(s.replies, p...)
	start := !s.replying
	s.replying = true
	s.replyMu.Unlock()
	if start {
		s.replyWG.Add(1)
		go s.writeReplies()
	}
}

func (s *session) writeReplies() {
	defer s.replyWG.Done()
	for {
		s.replyMu.Lock()
		b := s.replies
		s.replies = nil
		if len(b) == 0 || s.masterClosed.Load() {
			s.replying = false
			s.replyMu.Unlock()
			return
		}
		s.replyMu.Unlock()
		if _, err := s.master.Write(b); err != nil {
			s.log.Debug().Err(err).Msg("answer a terminal query")
		}
	}
}
