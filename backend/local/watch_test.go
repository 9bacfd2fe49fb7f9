package local

import (
	"context"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/vt"
)

// One drawing per amount of scrollback serves the viewers that ask
// within pictureReuse, and no longer; a new amount takes the older slot.
func TestPictureCache(t *testing.T) {
	var c pictureCache
	t0 := time.Unix(0, 0)
	withHistory := messages.Picture{Draw: []byte("with history"), Seq: 7}
	screenOnly := messages.Picture{Draw: []byte("screen"), Seq: 7}
	c.keep(1000, withHistory, t0)
	c.keep(0, screenOnly, t0)
	if p, ok := c.fresh(1000, t0.Add(pictureReuse-time.Millisecond), 0); !ok || string(p.Draw) != "with history" {
		t.Fatalf("within a frame: %q, %v; want the kept drawing", p.Draw, ok)
	}
	if p, ok := c.fresh(0, t0, 0); !ok || string(p.Draw) != "screen" {
		t.Fatalf("the other amount: %q, %v", p.Draw, ok)
	}
	if _, ok := c.fresh(1000, t0.Add(pictureReuse), 0); ok {
		t.Fatal("a drawing older than a frame was reused")
	}
	if p, ok := c.fresh(1000, t0.Add(time.Hour), 7); !ok || string(p.Draw) != "with history" {
		t.Fatalf("a drawing of the screen as it is, an hour old: %q, %v; want it reused", p.Draw, ok)
	}
	if _, ok := c.fresh(500, t0, 0); ok {
		t.Fatal("a drawing served another amount of scrollback")
	}
	c.keep(500, messages.Picture{Draw: []byte("other"), Seq: 8}, t0)
	if _, ok := c.fresh(1000, t0, 0); ok {
		t.Fatal("a third amount did not replace the oldest slot")
	}
	if p, ok := c.fresh(0, t0, 0); !ok || p.Seq != 7 {
		t.Fatal("a third amount replaced the newer slot")
	}
}

// A reused picture must still be followed from memory: keeps says
// whether the window holds every event after the picture's number.
func TestStreamKeeps(t *testing.T) {
	st := newStream(nil, nil, record.Event{Kind: record.KindStart})
	st.limit = 10
	for _, s := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		st.output([]byte(s))
	}
	// Events 4 and 5 are kept (TestStreamRing).
	for seq, want := range map[uint64]bool{1: false, 2: false, 3: true, 4: true, 5: true} {
		if got := st.keeps(seq); got != want {
			t.Errorf("keeps(%d) = %v, want %v", seq, got, want)
		}
	}
}

// watchHistory is the scrollback a joining viewer's picture carries
// (actors.WatchHistory; actors is not imported here).
const watchHistory = 1000

// joiner is a viewer as actors.Watch is one: a picture, then every event
// after the event it shows.
type joiner struct {
	p   messages.Picture
	seq uint64
	evs []record.Event
}

// Viewers joining while the terminal prints, each with the picture the
// session hands it (shared with the viewers that asked about the same
// time, drawn for it, or of the screen alone), then the events after it:
// each ends with exactly the session's screen, nothing lost or drawn
// twice. The output stays within the stream's window, so no viewer may
// find events gone.
func TestSharedPicturesFollowTheStream(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	s := bs.(*session)
	waitPrompt(t, rec, 0)
	ep := bs.BeginSend()
	if err := bs.Write(context.Background(), append([]byte("for i in $(seq 1 5000); do echo $i; done"), bs.Enter()...)); err != nil {
		t.Fatal(err)
	}
	var vs []*joiner
	read := func() {
		for _, v := range vs {
			evs, lost := s.Events(v.seq)
			if lost {
				t.Fatalf("events after %d (the picture's %d) are gone", v.seq, v.p.Seq)
			}
			if len(evs) > 0 {
				v.evs, v.seq = append(v.evs, evs...), evs[len(evs)-1].Seq
			}
		}
	}
	stale := 0 // pictures handed out after the terminal drew on
	for {
		// A join at every event: as often as they could share a picture.
		// The prompt's fact comes after its output: when the loop saw the
		// last output before the fact, only the fact wakes it.
		newest, _ := s.stream.latest()
		prompted := rec.promptCame()
		if _, done := rec.prompt(ep); !done {
			select {
			case <-s.Changed(newest):
			case <-prompted:
			case <-time.After(10 * time.Second):
				t.Fatal("the terminal printed nothing for 10 s")
			}
		}
		_, done := rec.prompt(ep)
		// The joins are not paced here, to share pictures while the
		// terminal prints.
		s.pictures.pace.mu.Lock()
		s.pictures.pace.tat = time.Time{}
		s.pictures.pace.mu.Unlock()
		for _, history := range []int{watchHistory, 0} {
			p := s.Picture(history)
			if !done && s.stream.shown() > p.Seq {
				stale++
			}
			vs = append(vs, &joiner{p: p, seq: p.Seq})
		}
		read()
		if done {
			break
		}
	}
	read() // the prompt's fact comes after its output was numbered
	s.mu.Lock()
	want := s.screen.Screen()
	s.mu.Unlock()
	shared := 0
	for i, v := range vs {
		if i > 1 && unsafe.SliceData(v.p.Draw) == unsafe.SliceData(vs[i-2].p.Draw) {
			shared++
		}
		e, err := vt.New(v.p.Rows, v.p.Cols, vt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e.Feed(v.p.Draw)
		for _, ev := range v.evs {
			switch ev.Kind {
			case record.KindOutput:
				e.Feed([]byte(ev.Data))
			case record.KindResize:
				t.Fatalf("a resize nobody asked for: %+v", ev)
			}
		}
		// The numbers seq printed, as this viewer's terminal holds them
		// (its scrollback, then its screen): consecutive, up to the last.
		var lines []string
		first, next := e.Retained()
		for l := first; l < next; l++ {
			lines = append(lines, e.FinalLine(l))
		}
		prev := 0
		for _, l := range append(lines, e.Screen().Rows...) {
			n, err := strconv.Atoi(l)
			if err != nil {
				continue
			}
			if prev != 0 && n != prev+1 {
				t.Fatalf("viewer %d (picture at %d, %d events after it) shows %d after %d", i, v.p.Seq, len(v.evs), n, prev)
			}
			prev = n
		}
		if prev != 5000 {
			t.Fatalf("viewer %d shows %d last, not 5000", i, prev)
		}
		if got := e.Screen(); got.Hash != want.Hash {
			t.Fatalf("viewer %d (picture at %d, %d events after it) ends with\n%q\ncursor %d,%d; the session shows\n%q\ncursor %d,%d",
				i, v.p.Seq, len(v.evs), got.Rows, got.CursorRow, got.CursorCol, want.Rows, want.CursorRow, want.CursorCol)
		}
	}
	t.Logf("%d viewers joined during the output; %d pictures were another's, %d older than the screen", len(vs), shared, stale)

	// Nothing drew since: every viewer gets the same drawing, however
	// long ago it was drawn (these joins are paced again, further apart
	// than a frame).
	a := s.Picture(watchHistory)
	for range joinBurst + 2 {
		if b := s.Picture(watchHistory); unsafe.SliceData(a.Draw) != unsafe.SliceData(b.Draw) || a.Seq != b.Seq {
			t.Fatalf("a quiet session drew again for a join: picture at %d, then at %d", a.Seq, b.Seq)
		}
	}
}

// Joins are paced: a burst at once, then one a joinEvery, in turn; a
// crowd waits at most joinWaitMax and pushes no later slot out; once the
// slots passed, a burst joins at once again.
func TestJoinPacer(t *testing.T) {
	var j joinPacer
	now := time.Unix(1_000_000, 0)
	for i := range joinBurst {
		if w := j.reserve(now); w != 0 {
			t.Fatalf("join %d of the burst waits %v", i, w)
		}
	}
	for i := 1; i <= 3; i++ {
		if w := j.reserve(now); w != time.Duration(i)*joinEvery {
			t.Fatalf("join %d past the burst waits %v, want %v", i, w, time.Duration(i)*joinEvery)
		}
	}
	for range 10_000 {
		if w := j.reserve(now); w > joinWaitMax {
			t.Fatalf("a join in a crowd waits %v, past %v", w, joinWaitMax)
		}
	}
	if last := j.tat.Sub(now); last > joinWaitMax+joinBurst*joinEvery {
		t.Fatalf("the crowd took slots %v ahead", last)
	}
	now = now.Add(time.Hour)
	for i := range joinBurst {
		if w := j.reserve(now); w != 0 {
			t.Fatalf("join %d of a later burst waits %v", i, w)
		}
	}
}
