//go:build linux

package test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// bigScrollback opens a session whose scrollback holds everything the test
// prints, and returns the cursor after its first prompt.
func bigScrollback(t *testing.T) (*harness, *actors.Session, uint64) {
	cfg := testkit.PTYConfig()
	cfg.ScrollbackLines, cfg.ScrollbackMaxBytes = 100000, 1<<22
	h := newHarness(t, cfg, local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	return h, sh, h.prompt(sh.ID(), "true", 0).Cursor
}

// Every result carries a cursor; reading on from it shows each later final
// line once, in order, page by page, then the lines still on the screen
// (re-sent by every read until they scroll), and says which lines
// scrollback no longer holds. A flood's truncated viewport states the
// range it leaves out.
func TestCursorReads(t *testing.T) {
	h, sh, start := bigScrollback(t)
	ctx := testkit.Ctx(t)
	res := h.prompt(sh.ID(), "seq 1 20000", 0)
	if !res.Truncated || res.OmittedTo <= res.OmittedFrom || res.OmittedFrom < start {
		t.Fatalf("flood: truncated %v omitted [%d,%d) from %d", res.Truncated, res.OmittedFrom, res.OmittedTo, start)
	}
	// Read everything after start, page by page (16 KiB pages).
	var got []string
	cursor, pages := start, 0
	for {
		r, err := sh.Read(ctx, messages.ReadRequest{Cursor: &cursor})
		if err != nil {
			t.Fatal(err)
		}
		if r.OmittedTo > r.OmittedFrom {
			t.Fatalf("omitted [%d,%d) with a scrollback that holds everything", r.OmittedFrom, r.OmittedTo)
		}
		pages++
		final, tail := splitFinal(r.Text, r.Cursor-cursor)
		got = append(got, final...)
		if uint64(len(got)) != r.Cursor-start {
			t.Fatalf("page %d: %d lines shown, cursor moved %d", pages, len(got), r.Cursor-start)
		}
		cursor = r.Cursor
		if !r.More {
			got = append(got, tail...)
			break
		}
	}
	if pages < 5 {
		t.Fatalf("%d pages for ~110 KB through 16 KiB pages", pages)
	}
	n := 0
	for _, l := range got {
		if v, err := strconv.Atoi(l); err == nil && v >= 1 && v <= 20000 {
			n++
			if v != n {
				t.Fatalf("line %q after %d: lost, repeated or reordered", l, n-1)
			}
		}
	}
	if n != 20000 || cursor != res.Cursor {
		t.Fatalf("%d numbers read, cursor %d, send's cursor %d", n, cursor, res.Cursor)
	}

	// Scrollback that cannot hold it all says what it dropped.
	small := newHarness(t, testkit.PTYConfig(), local.Options{})
	ss := small.spawn(messages.SpawnRequest{})
	// (The newest lines are still on the screen, not final: 400 back from
	// the cursor is inside seq's output.)
	from := small.prompt(ss.ID(), "seq 1 500", 0).Cursor - 400
	r, err := ss.Read(ctx, messages.ReadRequest{Cursor: &from})
	if err != nil || r.OmittedFrom != from || r.OmittedTo <= from || !r.Truncated {
		t.Fatalf("dropped lines: %+v %v", r, err)
	}
}

// splitFinal splits a cursor read's text into the n final lines it shows
// first and the lines after them, still on the screen.
func splitFinal(text string, n uint64) (final, tail []string) {
	ls := strings.Split(text, "\n")
	return ls[:n], ls[n:]
}

// Two readers with their own cursors, while output flows, each see every
// final line once and in order, and at the end the lines on the screen
// continue them.
func TestCursorConcurrentReaders(t *testing.T) {
	_, sh, start := bigScrollback(t)
	ctx := testkit.Ctx(t)
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "for i in $(seq 1 3000); do echo n$i; done", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			cursor, next := start, 1
			check := func(ls []string) bool {
				for _, l := range ls {
					v, ok := strings.CutPrefix(l, "n")
					if !ok {
						continue
					}
					if v != strconv.Itoa(next) {
						t.Errorf("reader %d: line n%s, want n%d", r, v, next)
						return false
					}
					next++
				}
				return true
			}
			for {
				settled := false
				select {
				case <-op.Done():
					settled = true
				default:
				}
				page, err := sh.Read(ctx, messages.ReadRequest{Cursor: &cursor})
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				final, tail := splitFinal(page.Text, page.Cursor-cursor)
				if !check(final) {
					return
				}
				cursor = page.Cursor
				if settled && !page.More {
					if check(tail) && next != 3001 {
						t.Errorf("reader %d: %d lines, want 3000", r, next-1)
					}
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := op.Result(ctx); err != nil {
		t.Fatal(err)
	}
}
