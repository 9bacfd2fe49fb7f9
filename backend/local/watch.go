package local

import (
	"sync"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
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
//
// A drawing with scrollback costs about a millisecond of the pump's time
// (it holds mu while it draws), so viewers joining by the hundred during
// a flood starved it: 42.8 MiB/s fell to 2.3 (test/adversarial,
// TestLoadViewersChurnDuringFlood). One drawing per amount of scrollback
// serves every viewer that asks within pictureReuse, a frame of theirs: a
// picture a few milliseconds old is still consistent, as it carries the
// number of the event it shows, and the viewer reads on from there, as
// long as the window still holds what came after it.
//
// Sharing the drawing is not enough: every join costs the server far more
// than its picture (the WebSocket, its goroutines, the session's badge,
// the picture's bytes on the socket), and viewers joining and leaving in
// a loop, sharing pictures, still took both cores from the flood and from
// every other session's sends. Joins are paced (joinPacer): past a burst,
// one a joinEvery per session, each waiting its turn off every lock.
func (s *session) Picture(history int) messages.Picture {
	if history > 0 {
		s.pictures.pace.await(time.Now(), s.pumpDone)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	shown := s.stream.shown()
	if p, ok := s.pictures.fresh(history, now, shown); ok && (p.Seq == shown || s.stream.keeps(p.Seq)) {
		return p
	}
	size := s.screen.Size()
	p := messages.Picture{Draw: s.screen.Render(history), Rows: size.Rows, Cols: size.Cols, Seq: shown}
	s.pictures.keep(history, p, now)
	return p
}

// pictureCache keeps the newest drawing for the few amounts of scrollback
// viewers ask for (none, for a viewer that jumps to the screen; the
// page's history, for one that joins).
type pictureCache struct {
	entries [2]cachedPicture
	next    int       // the entry a new amount replaces
	pace    joinPacer // under its own lock, never mu
}

// joinPacer paces the pictures with scrollback a session draws, that is
// its viewers' joins (a viewer's first picture, or a fresh one after it
// fell out of the window). Past joinBurst at once, one joins every
// joinEvery, in turn: a join waits for its slot (joinEvery per viewer
// joining at that moment; a join that waits costs nothing, and the
// viewer's hello is already sent), then takes the shared picture. A crowd
// waits at most joinWaitMax, which also bounds how long a join whose
// viewer left meanwhile lingers (the wait has no context to end it).
type joinPacer struct {
	mu  sync.Mutex
	tat time.Time // when the slot after the last one taken is free
}

const (
	joinEvery   = 20 * time.Millisecond
	joinBurst   = 10
	joinWaitMax = 5 * time.Second
)

// await takes the next slot and waits for it, or until done closes (the
// session's output ended: nothing more to wait for).
func (j *joinPacer) await(now time.Time, done <-chan struct{}) {
	wait := j.reserve(now)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// reserve takes the next slot, and returns how long until it is free.
func (j *joinPacer) reserve(now time.Time) time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	tat := j.tat
	if tat.Before(now) {
		tat = now
	}
	tat = tat.Add(joinEvery)
	wait := tat.Add(-joinBurst * joinEvery).Sub(now)
	if wait > joinWaitMax {
		// A crowd: no join waits longer, and it takes no later slot.
		return joinWaitMax
	}
	j.tat = tat
	return max(wait, 0)
}

type cachedPicture struct {
	history int
	at      time.Time
	p       messages.Picture
}

// fresh returns the kept drawing with history lines of scrollback when
// it is younger than pictureReuse, or still shows the screen (nothing drew
// after event shown, the one the screen shows now): paced joins come
// further apart than a frame, and on a quiet session they all share one.
func (c *pictureCache) fresh(history int, now time.Time, shown uint64) (messages.Picture, bool) {
	for _, e := range c.entries {
		if e.p.Draw != nil && e.history == history && (now.Sub(e.at) < pictureReuse || e.p.Seq == shown) {
			return e.p, true
		}
	}
	return messages.Picture{}, false
}

func (c *pictureCache) keep(history int, p messages.Picture, now time.Time) {
	for i := range c.entries {
		if c.entries[i].p.Draw != nil && c.entries[i].history == history {
			c.entries[i] = cachedPicture{history, now, p}
			return
		}
	}
	c.entries[c.next] = cachedPicture{history, now, p}
	c.next = (c.next + 1) % len(c.entries)
}

// Older implements backend.Watchable: the events after seq that the
// window lost, read back from the session's record.
func (s *session) Older(seq uint64) ([]record.Event, bool) { return s.stream.older(seq) }

// pictureReuse is how long a picture serves the viewers that ask for one:
// a frame of theirs.
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
