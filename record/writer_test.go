package record

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentAppend: several goroutines append at once (their events
// numbered under one lock, as the session's pump numbers them); the
// record has them all, in the order numbered, and verifies.
func TestConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.rec")
	w, err := NewWriter(path, Options{Clock: fixedClock, QueueBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 1, Kind: KindStart, Start: &Start{Session: "c"}}); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		seq uint64 = 1
		wg  sync.WaitGroup
	)
	const goroutines, each = 8, 200
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				mu.Lock()
				seq++
				err := w.Append(Event{Seq: seq, Kind: KindOutput, Data: fmt.Sprintf("g%d-%d\n", g, i)})
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					if err := w.Flush(context.Background()); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(goroutines*each + 2); rep.Records != want || sum.Records != want {
		t.Fatalf("%d records (summary %d), want %d", rep.Records, sum.Records, want)
	}
}

// TestFlush: once Flush returns, a reader of the file sees every event
// appended before it.
func TestFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rec")
	w, err := NewWriter(path, Options{Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	evs := session()
	for i, ev := range evs {
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
		flush(t, w)
		r, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var last Event
		for {
			ev, err := r.Next()
			if err != nil {
				var ie *IncompleteError
				if !errors.As(err, &ie) || ie.Verified != uint64(i+1) {
					t.Fatalf("after event %d: %v", i+1, err)
				}
				break
			}
			last = ev
		}
		r.Close()
		if last.Seq != ev.Seq {
			t.Fatalf("after flushing event %d the file ends at %d", ev.Seq, last.Seq)
		}
	}
}

// TestCloseIdempotent: Close writes the end record once; a second Close
// gives the same summary; Append after it is refused.
func TestCloseIdempotent(t *testing.T) {
	path, sum := writeRecord(t, t.TempDir(), Options{}, session())
	w, err := NewWriter(path+".2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range session() {
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	s1, err1 := w.Close()
	s2, err2 := w.Close()
	if err1 != nil || err2 != nil || s1 != s2 || s1.Records != sum.Records {
		t.Fatalf("close twice: %+v %v, %+v %v", s1, err1, s2, err2)
	}
	if err := w.Append(Event{Kind: KindMark}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if n := len(lines(t, path+".2")); n != len(session())+2 { // the last split is empty
		t.Fatalf("%d lines after two Closes", n-1)
	}
	if _, err := NewWriter(path, Options{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("a writer over an existing record: %v", err)
	}
}

func TestAppendRules(t *testing.T) {
	w := NewWriterTo(&strings.Builder{}, Options{})
	if err := w.Append(Event{Kind: KindOutput}); !errors.Is(err, ErrNoStart) {
		t.Fatalf("output first: %v", err)
	}
	if err := w.Append(Event{Kind: KindStart}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []Kind{KindStart, KindCheckpoint, KindEnd} {
		if err := w.Append(Event{Kind: k}); !errors.Is(err, ErrReservedKind) {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWriterTo(&strings.Builder{}, Options{}).Close(); !errors.Is(err, ErrNoStart) {
		t.Fatalf("close without a start: %v", err)
	}
}

// gate is a writer whose writes wait for release, or fail.
type gate struct {
	release chan struct{}
	fail    error
	mu      sync.Mutex
	b       strings.Builder
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.release
	if g.fail != nil {
		return 0, g.fail
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

// TestQueueFull: beyond the byte budget Append waits for the disk; it
// returns once the writer has taken the queue. A write error is then
// every Append's and Flush's answer, at once.
func TestQueueFull(t *testing.T) {
	g := &gate{release: make(chan struct{})}
	w := NewWriterTo(g, Options{QueueBytes: 600})
	if err := w.Append(Event{Seq: 1, Kind: KindStart}); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 2, Kind: KindOutput, Data: "x"}); err != nil {
		t.Fatal(err)
	}
	appended := make(chan error)
	go func() { appended <- w.Append(Event{Seq: 3, Kind: KindOutput, Data: strings.Repeat("y", 200)}) }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("flush with a stuck disk and an ended ctx: %v", err)
	}
	select {
	case err := <-appended:
		t.Fatalf("append over the budget returned (%v) while the disk was stuck", err)
	default:
	}
	close(g.release)
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(strings.NewReader(g.b.String()), nil)
	if err != nil || rep.Records != 4 {
		t.Fatalf("%+v, %v", rep, err)
	}

	broken := errors.New("disk gone")
	fg := &gate{release: make(chan struct{}), fail: broken}
	close(fg.release)
	w = NewWriterTo(fg, Options{})
	if err := w.Append(Event{Seq: 1, Kind: KindStart}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(context.Background()); !errors.Is(err, broken) {
		t.Fatalf("flush: %v, want the write error", err)
	}
	if err := w.Append(Event{Seq: 2, Kind: KindOutput}); !errors.Is(err, broken) {
		t.Fatalf("append: %v, want the write error", err)
	}
	if _, err := w.Close(); !errors.Is(err, broken) {
		t.Fatalf("close: %v, want the write error", err)
	}
}

// TestSegments: a capped record is cut into segments, the oldest are
// removed, the rest stay under the cap and verify from the checkpoint,
// which holds the screen the caller gave after the event before it and
// the chain's place.
func TestSegments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.rec")
	opts := Options{Clock: fixedClock, MaxBytes: 8 << 10, SegmentBytes: 2 << 10, Screens: true}
	w, err := NewWriter(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 1, Kind: KindStart, Rows: 24, Cols: 80, Start: &Start{Term: "xterm"}}); err != nil {
		t.Fatal(err)
	}
	const n = 400
	for i := range n {
		if err := w.Append(Event{Seq: uint64(i + 2), Mono: time.Duration(i) * time.Millisecond, Kind: KindOutput, Data: fmt.Sprintf("line %d\r\n", i)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if w.WantsScreen() {
			cp := &Checkpoint{Screen: []string{"$ row", fmt.Sprint(i)}, Cursor: [2]int{1, 3}}
			if err := w.Append(Event{Kind: KindCheckpoint, Rows: 24, Cols: 80, Checkpoint: cp}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	segs, err := Segments(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 2 || segs[0] == path {
		t.Fatalf("segments %v: the first should have been cut", segs)
	}
	var total int64
	for _, s := range segs {
		fi, err := os.Stat(s)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v", s, fi.Mode().Perm())
		}
	}
	if total > opts.MaxBytes {
		t.Fatalf("%d bytes kept, cap %d", total, opts.MaxBytes)
	}
	rep, err := VerifyFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.FromCheckpoint || rep.First <= 1 || !rep.Closed || rep.Records != sum.Records || rep.Last != sum.SHA256 {
		t.Fatalf("report %+v, summary %+v", rep, sum)
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cp, err := r.Next()
	if err != nil || cp.Kind != KindCheckpoint || cp.Checkpoint.Record != rep.First || cp.Rows != 24 ||
		cp.Checkpoint.Term != "xterm" || len(cp.Checkpoint.Screen) != 2 ||
		cp.Checkpoint.Screen[1] != fmt.Sprint(cp.Seq-2) || cp.Checkpoint.Cursor != [2]int{1, 3} {
		t.Fatalf("first record %+v %+v, %v", cp, cp.Checkpoint, err)
	}
	if next, err := r.Next(); err != nil || next.Seq != cp.Seq+1 {
		t.Fatalf("the record after the checkpoint: %+v, %v; want number %d", next, err, cp.Seq+1)
	}

	// A checkpoint the caller does not give: the segment begins without
	// a screen at twice its size.
	path2 := filepath.Join(dir, "quiet.rec")
	w2, err := NewWriter(path2, opts)
	if err != nil {
		t.Fatal(err)
	}
	w2.Append(Event{Seq: 1, Kind: KindStart, Rows: 24, Cols: 80})
	for i := range n {
		w2.Append(Event{Seq: uint64(i + 2), Kind: KindOutput, Data: fmt.Sprintf("line %d\r\n", i)})
	}
	if _, err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(path2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if cp, err := r2.Next(); err != nil || cp.Kind != KindCheckpoint || cp.Checkpoint.Screen != nil {
		t.Fatalf("first record without a screen given: %+v, %v", cp, err)
	}

	// One segment on its own (a later cut) verifies from its checkpoint too.
	last := segs[len(segs)-1]
	rep, err = VerifyFile(last, nil)
	if err != nil || !rep.FromCheckpoint {
		t.Fatalf("the last segment alone: %+v, %v", rep, err)
	}
	// A middle segment removed: the next checkpoint's prev no longer
	// follows, corrupt.
	if len(segs) >= 3 {
		if err := os.Remove(segs[1]); err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyFile(path, nil); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a middle segment removed: %v", err)
		}
	}
}

// A caller that claimed a screen appends it behind the events it queued
// meanwhile, however many (the writer runs behind it): the segment waits
// for it, and no segment begins with a checkpoint without a screen (a
// stress run cut such a record, and its replay could not start).
func TestClaimedScreenIsWaitedFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.rec")
	w, err := NewWriter(path, Options{Clock: fixedClock, MaxBytes: 64 << 10, SegmentBytes: 2 << 10, Screens: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 1, Kind: KindStart, Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	seq := uint64(1)
	out := func(n int) {
		for range n {
			seq++
			if err := w.Append(Event{Seq: seq, Kind: KindOutput, Data: fmt.Sprintf("line %d of the flood\r\n", seq)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	claimed := 0
	for range 20 {
		out(40)
		if w.WantsScreen() {
			claimed++
			// Three segments' worth of events behind the claim.
			out(400)
			if err := w.Append(Event{Kind: KindCheckpoint, Rows: 24, Cols: 80, Checkpoint: &Checkpoint{Screen: []string{"$"}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if claimed < 2 {
		t.Fatalf("%d screens claimed", claimed)
	}
	segs, err := Segments(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs[1:] {
		r, err := Open(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := r.Next()
		r.Close()
		if err != nil || cp.Kind != KindCheckpoint || len(cp.Checkpoint.Screen) == 0 {
			t.Fatalf("%s begins with %+v (%v): want a checkpoint with a screen", s, cp, err)
		}
	}
}
