package local

import (
	"strconv"
	"strings"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local/vt"
	"github.com/ptyactor/ptyactor/messages"
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

// Picture implements backend.Watchable: the emulator's drawing and the
// number of the newest event it shows, under mu, where output is fed and
// numbered, so the two agree.
func (s *session) Picture(history int) messages.Picture {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := s.screen.Size()
	return messages.Picture{Draw: drawScreen(s.screen, history), Rows: size.Rows, Cols: size.Cols, Seq: s.stream.shown()}
}

// Activity implements backend.Watchable: the badge from the kernel (the
// foreground program blocked reading the terminal, the terminal's echo
// off), the foreground program and its folder, the last output.
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
	if reader, ok := s.waitingReader(pgid); ok {
		a.Badge, a.Reader = messages.BadgeWaiting, reader
		if s.secretMode() {
			a.Badge = messages.BadgeSecret
		}
	}
	return a
}

// drawScreen draws what the emulator shows on a fresh terminal: up to
// history lines of its scrollback, then the screen's rows and the cursor.
// (Text only, for now: the emulator does not keep colours yet.)
func drawScreen(emu *vt.Emulator, history int) []byte {
	var b strings.Builder
	first, next := emu.Retained()
	for i := max(first, next-int64(history)); i < next; i++ {
		b.WriteString(emu.FinalLine(i))
		b.WriteString("\r\n")
	}
	sc := emu.Screen()
	// Scroll the history up and off the screen, then draw each row.
	b.WriteString(strings.Repeat("\r\n", max(sc.Size.Rows-1, 0)))
	for y, row := range sc.Rows {
		b.WriteString("\x1b[" + strconv.Itoa(y+1) + ";1H\x1b[2K" + row)
	}
	b.WriteString("\x1b[" + strconv.Itoa(sc.CursorRow+1) + ";" + strconv.Itoa(sc.CursorCol+1) + "H")
	return []byte(b.String())
}
