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

// Every result carries a cursor; reading on from it shows each later line
// once, in order, page by page, and says which lines scrollback no longer
// holds. A flood's truncated viewport states the range it leaves out.
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
		for _, l := range strings.SplitAfter(r.Text, "\n") {
			if strings.HasSuffix(l, "\n") {
				got = append(got, strings.TrimSuffix(l, "\n"))
			}
		}
		if uint64(len(got)) != r.Cursor-start {
			t.Fatalf("page %d: %d lines shown, cursor moved %d", pages, len(got), r.Cursor-start)
		}
		cursor = r.Cursor
		if !r.More {
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
	from := small.prompt(ss.ID(), "seq 1 500", 0).Cursor - 500
	r, err := ss.Read(ctx, messages.ReadRequest{Cursor: &from})
	if err != nil || r.OmittedFrom != from || r.OmittedTo <= from || !r.Truncated {
		t.Fatalf("dropped lines: %+v %v", r, err)
	}
}

// Two readers with their own cursors, while output flows, each see every
// line once and in order.
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
			for next <= 3000 {
				page, err := sh.Read(ctx, messages.ReadRequest{Cursor: &cursor})
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				for _, l := range strings.SplitAfter(page.Text, "\n") {
					v, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "n")
					if !strings.HasSuffix(l, "\n") || !ok {
						continue
					}
					if v != strconv.Itoa(next) {
						t.Errorf("reader %d: line n%s, want n%d", r, v, next)
						return
					}
					next++
				}
				cursor = page.Cursor
			}
		})
	}
	wg.Wait()
	if _, err := op.Result(ctx); err != nil {
		t.Fatal(err)
	}
}
