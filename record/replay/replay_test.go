package replay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/vt"
	"github.com/ptyactor/ptyactor/record"
)

// writer records events as a session does: numbered, and, when the
// writer asks, the live emulator's screen as the checkpoint after them.
type writer struct {
	t    *testing.T
	w    *record.Writer
	emu  *vt.Emulator
	seq  uint64
	live map[uint64]string // the live screen's hash after each event
}

func newWriter(t *testing.T, path string, opts record.Options) *writer {
	w, err := record.NewWriter(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	emu, err := vt.New(24, 80, vt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rw := &writer{t: t, w: w, emu: emu, live: map[uint64]string{}}
	rw.add(record.Event{Kind: record.KindStart, Rows: 24, Cols: 80, Start: &record.Start{Term: "xterm-256color"}})
	return rw
}

func (rw *writer) add(ev record.Event) {
	rw.t.Helper()
	rw.seq++
	ev.Seq, ev.Mono = rw.seq, time.Duration(rw.seq)*time.Millisecond
	switch ev.Kind {
	case record.KindOutput:
		rw.emu.Feed([]byte(ev.Data))
	case record.KindResize:
		if err := rw.emu.Resize(ev.Rows, ev.Cols); err != nil {
			rw.t.Fatal(err)
		}
	}
	if err := rw.w.Append(ev); err != nil {
		rw.t.Fatal(err)
	}
	rw.live[ev.Seq] = rw.emu.Screen().Hash
	// Flushed, so that the writer asks for a screen as soon as a segment
	// is full (a session's pump asks on its next read).
	if err := rw.w.Flush(context.Background()); err != nil {
		rw.t.Fatal(err)
	}
	if rw.w.WantsScreen() {
		// As a session takes it (backend/local checkpoint).
		sc := rw.emu.Screen()
		cp := &record.Checkpoint{Screen: sc.Rows, Cursor: [2]int{sc.CursorRow, sc.CursorCol}, Alt: sc.AltScreen}
		if h, ok := rw.emu.Hidden(); ok {
			cp.Hidden = &record.Hidden{Rows: h.Rows, Cursor: [2]int{h.CursorRow, h.CursorCol}}
		}
		if top, bottom := rw.emu.Margins(); top != 0 || bottom != sc.Size.Rows-1 {
			cp.Margins = &[2]int{top, bottom}
		}
		if err := rw.w.Append(record.Event{Kind: record.KindCheckpoint, Rows: sc.Size.Rows, Cols: sc.Size.Cols, Checkpoint: cp}); err != nil {
			rw.t.Fatal(err)
		}
	}
}

func (rw *writer) out(s string) { rw.add(record.Event{Kind: record.KindOutput, Data: s}) }

func (rw *writer) close() {
	if _, err := rw.w.Close(); err != nil {
		rw.t.Fatal(err)
	}
}

// session writes what a shell session shows: prompts and output, a
// progress line, a full-screen program that leaves, a resize, and a
// character split between two reads.
func session(rw *writer, rounds int) {
	for i := range rounds {
		rw.out(fmt.Sprintf("$ echo %d\r\n%d\r\n", i, i))
		rw.add(record.Event{Kind: record.KindInput, Source: record.SourceAgent, Data: "ls\r"})
		rw.out("progress 10%\rprogress 100%\r\n\x1b[1;31mred\x1b[0m caf\xc3")
		rw.out("\xa9 \x1b]0;title\x07tab\tend\r\n$ ")
		if i%5 == 2 {
			// A full-screen program: it scrolls within a region, is
			// resized, and leaves (checkpoints fall inside it too).
			rw.out("\x1b[?1049h\x1b[H\x1b[2Jvim-ish\x1b[5;10Hcursor here\x1b[3;20r")
			for k := range 12 {
				rw.out(fmt.Sprintf("\x1b[20;1H\nscrolled %d in the region", k))
			}
			rw.add(record.Event{Kind: record.KindResize, Rows: 30, Cols: 100})
			rw.out("\x1b[r\x1b[2J\x1b[Hredrawn at 100x30")
			rw.out("\x1b[?1049l")
			rw.add(record.Event{Kind: record.KindResize, Rows: 24, Cols: 80})
		}
	}
}

// TestScreenAtEveryEvent: the screen replayed at every event of a record
// has the hash the live emulator had then, for a whole record and for
// one whose oldest segments were cut (replayed from its checkpoint's
// screen, a program's alternate screen included).
func TestScreenAtEveryEvent(t *testing.T) {
	for _, c := range []struct {
		name string
		opts record.Options
	}{
		{"whole", record.Options{}},
		{"cut", record.Options{MaxBytes: 24 << 10, SegmentBytes: 6 << 10, Screens: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.rec")
			rw := newWriter(t, path, c.opts)
			session(rw, 60)
			rw.close()
			rep, err := record.VerifyFile(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.opts.MaxBytes > 0 != rep.FromCheckpoint {
				t.Fatalf("verify %+v: from a checkpoint %v, want %v", rep, rep.FromCheckpoint, c.opts.MaxBytes > 0)
			}
			r, err := record.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			first, err := r.Next()
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for seq := first.Seq; seq <= rw.seq; seq++ {
				r, err := record.Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				sc, at, err := Screen(r, seq)
				r.Close()
				if err != nil || at != seq {
					t.Fatalf("screen at %d: at %d, %v", seq, at, err)
				}
				if sc.Hash != rw.live[seq] {
					t.Fatalf("screen at %d: hash %s, live %s\n%s", seq, sc.Hash, rw.live[seq], strings.Join(sc.Rows, "\n"))
				}
				checked++
			}
			if checked < 50 {
				t.Fatalf("%d screens checked", checked)
			}
			if c.opts.MaxBytes > 0 {
				everySegment(t, path, rw.live)
			}
		})
	}
}

// everySegment replays each segment of a cut record on its own, from its
// checkpoint: screens behind a program's alternate screen and scroll
// regions included.
func everySegment(t *testing.T, path string, live map[uint64]string) {
	segs, err := record.Segments(path)
	if err != nil {
		t.Fatal(err)
	}
	var alt, margins int
	for _, seg := range segs {
		r, err := record.Open(seg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []uint64
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if ev.Kind == record.KindCheckpoint && len(seqs) == 0 {
				if ev.Checkpoint.Hidden != nil {
					alt++
				}
				if ev.Checkpoint.Margins != nil {
					margins++
				}
			}
			seqs = append(seqs, ev.Seq)
		}
		r.Close()
		for _, seq := range seqs {
			r, err := record.Open(seg, nil)
			if err != nil {
				t.Fatal(err)
			}
			sc, _, err := Screen(r, seq)
			r.Close()
			if err != nil {
				t.Fatalf("%s at %d: %v", filepath.Base(seg), seq, err)
			}
			if sc.Hash != live[seq] {
				t.Fatalf("%s at %d: hash %s, live %s\n%s", filepath.Base(seg), seq, sc.Hash, live[seq], strings.Join(sc.Rows, "\n"))
			}
		}
	}
	if alt == 0 || margins == 0 {
		t.Fatalf("%d segments: %d begin behind an alternate screen, %d in a scroll region; want some of each", len(segs), alt, margins)
	}
}

// TestScreenRange: a number before a cut record's first event or after
// its last is a *RangeError; 0 is the last event.
func TestScreenRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.rec")
	rw := newWriter(t, path, record.Options{})
	session(rw, 2)
	rw.close()
	open := func() *record.Reader {
		r, err := record.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	var re *RangeError
	if _, _, err := Screen(open(), rw.seq+1); !errors.As(err, &re) || re.Last != rw.seq {
		t.Fatalf("after the last: %v", err)
	}
	sc, at, err := Screen(open(), 0)
	if err != nil || at != rw.seq || sc.Hash != rw.live[rw.seq] {
		t.Fatalf("the last: %d, %v", at, err)
	}
}

// TestTranscript: the transcript is the emulator's: a line redrawn in
// place reads as its last state, escape sequences draw or vanish, and the
// cursor's line keeps its blanks up to the cursor.
func TestTranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.rec")
	rw := newWriter(t, path, record.Options{})
	rw.out("$ echo café\r\ncafé\r\n")
	rw.out("progress 10%\rprogress 100%\r\n")
	rw.out("\x1b]133;D;0\x07\x1b]0;title\x1b\\ab\bX\tend\r\n")
	rw.out("$ ")
	rw.close()
	r, err := record.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b strings.Builder
	if err := Transcript(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "$ echo café\ncafé\nprogress 100%\naX      end\n$ \n"
	if b.String() != want {
		t.Fatalf("transcript\n%q\nwant\n%q", b.String(), want)
	}
}
