package local

import (
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"time"
)

var _ backend.Watchable = (*session)(nil)

// A person watching a session reads its stream on their own: Changed
// wakes them when an event comes (closing a channel the stream keeps only
// while someone waits), and they read what is new with Events. The pump
// never waits for a viewer and never knows how many there are.

// Changed implements backend.Watchable.
func (s *session) Changed(seq uint64) <-chan struct{} { return s.stream.changedAfter(seq) }

// Ended implements backend.Watchable.
func (s *session) Ended(seq uint64) bool { return s.stream.done(seq) }

// Picture implements backend.Watchable: the emulator's drawing (its
// Render: history, screens in colour, modes, cursor) and the number of the
// newest event it shows, under mu, where output is fed and numbered, so
// the two agree.
func (s *session) Picture(history int) messages.Picture {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if history == 0 && s.skipPicture.Draw != nil && now.Sub(s.skipPictureAt) < pictureReuse {
		// Viewers behind a flood all jump to the screen every frame: one
		// drawing serves them all, and the pump waits for one Render.
		return s.skipPicture
	}
	size := s.screen.Size()
	p := messages.Picture{Draw: s.screen.Render(history), Rows: size.Rows, Cols: size.Cols, Seq: s.stream.shown()}
	if history == 0 {
		s.skipPicture, s.skipPictureAt = p, now
	}
	return p
}

// Older implements backend.Watchable: the events after seq that the
// window lost, read back from the session's record.
func (s *session) Older(seq uint64) ([]record.Event, bool) { return s.stream.older(seq) }

// pictureReuse is how long a picture without scrollback serves the
// viewers that ask for one: a frame of theirs.
const pictureReuse = 16 * time.Millisecond

// Activity implements backend.Watchable: the badge from the kernel (the
// foreground program blocked reading the terminal, and how: a line or
// keys, echo off, a wait with its own timeout; the shell itself, with the
// last prompt marker's exit code), the foreground program and its
// folder, the last output.
func (s *session) Activity() messages.Activity {
	s.mu.Lock()
	size := s.screen.Size()
	status := s.exit.status
	s.mu.Unlock()
	a := messages.Activity{Badge: messages.BadgeRunning, Rows: size.Rows, Cols: size.Cols}
	a.Seq, a.LastOutput = s.stream.latest()
	if status.Exited || s.exited() {
		a.Badge, a.ExitCode = messages.BadgeExited, status.ExitCode
		return a
	}
	pgid, err := s.Foreground()
	if err != nil {
		return a
	}
	a.Program, a.Cwd = foregroundProgram(pgid)
	if reader, r, ok := s.waitingReader(pgid); ok {
		s.mu.Lock()
		r.FullScreen = s.screen.AltScreen()
		s.mu.Unlock()
		a.Badge, a.Reader = r.Badge(), reader
		if a.Badge == messages.BadgePrompt {
			a.ExitCode = s.stream.lastExit()
		}
	}
	return a
}
