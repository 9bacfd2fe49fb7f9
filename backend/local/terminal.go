package local

import (
	"fmt"
	"os"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/vt"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"golang.org/x/sys/unix"
)

var _ backend.Terminal = (*session)(nil)

// The session's terminal emulator (package vt) is the one parser of every
// byte the pump reads, under the session's lock. It holds the screen a
// person would see, answers the program's queries, hands the prompt
// tracker the OSC payloads and the text after the marker (prompt.go), and
// its history, bounded as scrollback is, with its screen is the
// transcript every read and send result comes from (transcript.go).
func newScreen(rows, cols int, cfg messages.Config, reply func([]byte), prompt *promptTracker) (*vt.Emulator, error) {
	return vt.New(rows, cols, vt.Options{
		HistoryLines: cfg.ScrollbackLines, HistoryBytes: cfg.ScrollbackMaxBytes,
		Reply: reply, OSC: prompt.osc, Text: prompt.text,
	})
}

// Screen implements backend.Terminal.
func (s *session) Screen() messages.Screen {
	s.mu.Lock()
	sc := s.screen.Screen()
	// Output is numbered under mu once the emulator took it: the screen
	// and the number agree.
	seq := s.stream.shown()
	s.mu.Unlock()
	return messages.Screen{
		Rows: sc.Rows, CursorRow: sc.CursorRow, CursorCol: sc.CursorCol,
		Height: sc.Size.Rows, Width: sc.Size.Cols, AltScreen: sc.AltScreen, Hash: sc.Hash, Seq: seq,
	}
}

// checkpoint is the screen a record's segment begins with: what is shown,
// what a full-screen program hides, and the scroll region a program set,
// so that a replay from it draws what followed as the terminal did.
func checkpoint(emu *vt.Emulator) record.Event {
	sc := emu.Screen()
	cp := &record.Checkpoint{Screen: sc.Rows, Cursor: [2]int{sc.CursorRow, sc.CursorCol}, Alt: sc.AltScreen}
	if h, ok := emu.Hidden(); ok {
		cp.Hidden = &record.Hidden{Rows: h.Rows, Cursor: [2]int{h.CursorRow, h.CursorCol}}
	}
	if top, bottom := emu.Margins(); top != 0 || bottom != sc.Size.Rows-1 {
		cp.Margins = &[2]int{top, bottom}
	}
	return record.Event{Kind: record.KindCheckpoint, Rows: sc.Size.Rows, Cols: sc.Size.Cols, Checkpoint: cp}
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
	if err := s.screen.Resize(rows, cols); err != nil {
		return err
	}
	s.stream.resize(rows, cols)
	return nil
}

// InputModes implements backend.Terminal.
func (s *session) InputModes() (appCursor, bracketedPaste, altScreen bool) {
	s.mu.Lock()
	m, alt := s.screen.Modes(), s.screen.AltScreen()
	s.mu.Unlock()
	return m.AppCursor, m.BracketedPaste, alt
}

// maxPendingReplies bounds the answers that wait for the program to read
// its input: a few KiB, as a real terminal's own buffer. A program that
// floods queries and never reads loses the rest, as its answers would be
// lost on a real terminal when nobody reads them.
const maxPendingReplies = 4 << 10

// queueReply takes a query's answer from the emulator (under mu, on the
// pump) and has it written to the terminal without blocking the pump: a
// writer goroutine starts when answers wait and ends when none do, so an
// idle session holds none. Answers wait, at most maxPendingReplies of
// them, for the program that asked, the terminal's foreground group when
// they were parsed: when another group holds the terminal, or the asker
// is interrupted (flushInput), the waiting ones are dropped. The writer
// writes through the master's one write path, after (never inside) input
// the runtime is writing, but never waits there for room: it waits on a
// second handle on the master (awaitRoom), so the write lock TryWrite
// needs is never held across a blocking write. The exact tier sees an
// answer in the input queue until the program reads it.
func (s *session) queueReply(p []byte) {
	s.replies.mu.Lock()
	defer s.replies.mu.Unlock()
	if s.replies.stopped || len(s.replies.pending)+len(p) > maxPendingReplies {
		return // lost, whole: never a cut answer
	}
	fg := s.asker()
	if fg == s.replies.mute {
		return // interrupted, and dying
	}
	if fg != s.replies.to {
		s.replies.pending, s.replies.to = s.replies.pending[:0], fg // their asker left
	}
	s.replies.pending = append(s.replies.pending, p...)
	if !s.replies.writing {
		s.replies.writing = true
		s.replies.wg.Add(1)
		go s.writeReplies()
	}
}

// asker is the group whose query the pump parses now (under replies.mu):
// the terminal's foreground group, unless the shell holds the terminal
// and another group asked in the same burst of output (since the pump last
// found the master empty), or held the terminal when it began. Then the pump has not caught up with a program
// that left: its last queries are still being read after the shell took
// the terminal back, and their answers would be the shell's input.
func (s *session) asker() int {
	fg, _ := s.Foreground()
	if fg == s.PID() && s.replies.burstAsker != 0 {
		return s.replies.burstAsker
	}
	s.replies.burstAsker = fg
	return fg
}

// noteQuiet is called by the pump when it finds the master empty (fd):
// the burst of output is over, and an interrupted group's mute ends if
// another group holds the terminal (flushReplies).
func (s *session) noteQuiet(fd int) {
	pgid, _ := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	s.replies.mu.Lock()
	s.replies.burstAsker = 0
	if pgid != s.PID() {
		s.replies.burstAsker = pgid // the next burst begins under it
	}
	if s.replies.mute != pgid {
		s.replies.mute = 0
	}
	s.replies.mu.Unlock()
}

// dropReplies drops the answers waiting to be written and returns them.
func (s *session) dropReplies() string {
	s.replies.mu.Lock()
	defer s.replies.mu.Unlock()
	dropped := string(s.replies.pending)
	s.replies.pending = s.replies.pending[:0]
	return dropped
}

func (s *session) writeReplies() {
	defer s.replies.wg.Done()
	for {
		if s.writePending() {
			if err := s.awaitRoom(); err == nil {
				continue
			} else if !s.masterClosed.Load() {
				s.log.Debug().Err(err).Msg("answer a terminal query: wait for room")
			}
		}
		s.replies.mu.Lock()
		if len(s.replies.pending) == 0 || s.replies.stopped || s.masterClosed.Load() {
			s.replies.pending, s.replies.writing = nil, false
			s.replies.mu.Unlock()
			return
		}
		s.replies.mu.Unlock()
	}
}

// writePending writes what the terminal takes of the waiting answers now,
// under the master's write lock, which it holds only that long. It reports
// whether some wait for room.
func (s *session) writePending() (wait bool) {
	rc, err := s.master.SyscallConn()
	if err == nil {
		err = rc.Write(func(fd uintptr) bool {
			s.replies.mu.Lock()
			defer s.replies.mu.Unlock()
			if pgid, _ := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP); pgid != s.replies.to {
				s.replies.pending = s.replies.pending[:0] // their asker left
			}
			for len(s.replies.pending) > 0 {
				n, err := unix.Write(int(fd), s.replies.pending)
				if n > 0 {
					s.replies.pending = s.replies.pending[:copy(s.replies.pending, s.replies.pending[n:])]
				}
				if err == unix.EINTR {
					continue
				}
				if err != nil {
					if err != unix.EAGAIN {
						s.log.Debug().Err(err).Msg("answer a terminal query")
						s.replies.pending = s.replies.pending[:0]
					}
					break
				}
			}
			wait = len(s.replies.pending) > 0
			return true // never wait under the lock
		})
	}
	if err != nil {
		if !s.masterClosed.Load() {
			s.log.Debug().Err(err).Msg("answer a terminal query")
		}
		return false
	}
	return wait
}

// awaitRoom waits until the master takes input again, on the writer's own
// handle (a duplicate of the master, made when first needed), so it holds
// no lock of the master's. Close closes the handle, which ends the wait.
func (s *session) awaitRoom() error {
	s.replies.mu.Lock()
	if s.replies.stopped {
		s.replies.mu.Unlock()
		return os.ErrClosed
	}
	if s.replies.wake == nil {
		var nfd int
		err := control(s.master, func(fd int) (err error) {
			nfd, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
			return err
		})
		if err != nil {
			s.replies.mu.Unlock()
			return err
		}
		s.replies.wake = os.NewFile(uintptr(nfd), "ptmx (answers)")
	}
	f := s.replies.wake
	s.replies.mu.Unlock()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Write(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(pfd, 0)
		return err != nil && err != unix.EINTR || n > 0 && pfd[0].Revents != 0
	})
}

// flushReplies drops the answers waiting, running f (the input flush)
// under the writer's lock, so no answer written before the drop survives
// f. A SIGINT's flush names the group it interrupts in mute when that
// group dies of it: the answers its queries still being read would get go
// too, until the pump finds the master empty with another group holding
// the terminal, or the runtime writes input.
func (s *session) flushReplies(mute int, f func()) {
	s.replies.mu.Lock()
	defer s.replies.mu.Unlock()
	s.replies.pending = s.replies.pending[:0]
	s.replies.mute = mute
	if f != nil {
		f()
	}
}

// unmuteReplies ends flushReplies' mute: the runtime writes input, to
// whichever program holds the terminal.
func (s *session) unmuteReplies() {
	s.replies.mu.Lock()
	s.replies.mute = 0
	s.replies.mu.Unlock()
}

// stopReplies drops the answers for good (Close) and ends the writer's
// wait for room.
func (s *session) stopReplies() {
	s.replies.mu.Lock()
	defer s.replies.mu.Unlock()
	s.replies.pending = s.replies.pending[:0]
	s.replies.stopped = true
	if s.replies.wake != nil {
		_ = s.replies.wake.Close()
	}
}
