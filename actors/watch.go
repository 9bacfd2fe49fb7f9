package actors

import (
	"context"
	"io"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// Watch follows a session as a person watching it: first what the
// terminal shows, then every event after it, in order, none twice. Its
// reader pulls: Next returns what came since the last call, so a slow
// reader takes bigger batches and never holds up the session; one that
// fell out of the session's window of recent events gets a fresh picture
// and a gap. A Watch is used from one goroutine.
type Watch struct {
	src     backend.Watchable
	seq     uint64 // the newest event handed out
	since   uint64 // the caller's starting point, until the first frame
	started bool
	history int
	// fresh: a picture was just handed out; events between the newest
	// one it shows and the window's start changed nothing on the screen.
	fresh bool
	live  bool // a person's viewer: behind the window, it jumps (Live)
}

// Live makes this a person's watch: one that falls behind the window
// jumps to a picture of the screen now, with a gap, instead of reading
// what it missed back from the record. A person cannot read a flood
// (a page draws at most a frame's worth and jumps anyway), and a read
// back decodes and verifies the record from its start: two hundred
// viewers behind a 16 MiB flood spent the machine on it, and the flood
// fell from 42.8 to 2.3 MiB/s (test/adversarial,
// TestLoadViewersChurnDuringFlood). A program that must see every byte
// leaves it off.
func (w *Watch) Live() *Watch {
	w.live = true
	return w
}

// Frame is what Next returns: a picture (on the first frame unless the
// caller resumed, and after a gap), then the events after it.
type Frame struct {
	// Picture draws the terminal on a fresh one; Events follow it.
	Picture *messages.Picture
	// Gap: events between the caller's last and the picture were lost
	// (the caller was away longer than the session keeps events).
	Gap    bool
	Events []record.Event
}

// WatchHistory is how many lines of scrollback a picture carries.
const WatchHistory = 1000

// Watch starts following the session from after event since (0: from a
// picture of what it shows now). It fails with a typed error if the
// session keeps no event stream.
func (h *Session) Watch(ctx context.Context, since uint64) (*Watch, error) {
	r, err := askSession[*protocol.WatchReply](ctx, h, &protocol.WatchSession{Owner: h.owner, Session: h.ID(), Since: since})
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return &Watch{src: r.Source, since: since, history: WatchHistory}, nil
}

// Seq is the number of the newest event Next handed out (or the picture
// showed): where a reconnecting viewer resumes.
func (w *Watch) Seq() uint64 { return w.seq }

// Next waits for what came after the last frame and returns it: a picture
// first (or after a gap), else at least one event. It returns io.EOF once
// the session closed and everything was handed out, and ctx's error when
// it ends first.
func (w *Watch) Next(ctx context.Context) (Frame, error) {
	if !w.started {
		w.started = true
		if w.since == 0 {
			return w.picture(false), nil
		}
		w.seq = w.since
	}
	for {
		changed := w.src.Changed(w.seq)
		evs, lost := w.src.Events(w.seq)
		if lost && w.fresh {
			// Only events that draw nothing (input, sends, marks) lie
			// between the picture and the window: read from its start.
			evs, _ = w.src.Events(0)
			lost = false
		}
		if lost && !w.live {
			// Away longer than the window: what it no longer holds, from
			// the record, then the window.
			if older, ok := w.src.Older(w.seq); ok && len(older) > 0 {
				evs, lost = older, false
			}
		}
		w.fresh = false
		switch {
		case lost:
			return w.picture(true), nil
		case len(evs) > 0:
			w.seq = evs[len(evs)-1].Seq
			return Frame{Events: evs}, nil
		case w.src.Ended(w.seq):
			return Frame{}, io.EOF
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Frame{}, context.Cause(ctx)
		}
	}
}

// Skip returns a picture of what the terminal shows now, without its
// scrollback, and a gap: for a viewer too far behind to draw every byte (a
// flood), the screen is what a person can still see. The events after it
// follow from the next Next.
func (w *Watch) Skip() Frame {
	w.started = true
	p := w.src.Picture(0)
	w.seq, w.fresh = p.Seq, true
	return Frame{Picture: &p, Gap: true}
}

// picture starts again from what the terminal shows; the events after it
// follow from the next call.
func (w *Watch) picture(gap bool) Frame {
	p := w.src.Picture(w.history)
	w.seq, w.fresh = p.Seq, true
	return Frame{Picture: &p, Gap: gap}
}
