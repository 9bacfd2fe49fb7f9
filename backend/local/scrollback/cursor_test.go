package scrollback

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSinceBasics(t *testing.T) {
	b := New(100, 1<<20, 1<<20)
	b.Write([]byte("a\nb\nc"))
	if r := b.Since(0); r.Text != "a\nb\nc" || r.Cursor != 2 || r.More || r.Truncated {
		t.Fatalf("Since(0) %+v", r)
	}
	// The unfinished line is re-sent until it is final.
	if r := b.Since(2); r.Text != "c" || r.Cursor != 2 {
		t.Fatalf("Since(2) %+v", r)
	}
	b.Write([]byte("d\ne"))
	if r := b.Since(2); r.Text != "cd\ne" || r.Cursor != 3 {
		t.Fatalf("Since(2) after more %+v", r)
	}
	// A cursor from the future reads nothing new.
	if r := b.Since(99); r.Text != "e" || r.Cursor != 3 {
		t.Fatalf("Since(99) %+v", r)
	}
}

func TestSinceOmitsDroppedLines(t *testing.T) {
	b := New(3, 1<<20, 1<<20) // two final lines and the unfinished one
	for i := range 6 {
		b.Write(fmt.Appendf(nil, "line %d\n", i))
	}
	r := b.Since(0)
	if r.OmittedFrom != 0 || r.OmittedTo != 4 || !r.Truncated || r.Text != "line 4\nline 5\n" || r.Cursor != 6 {
		t.Fatalf("%+v", r)
	}
}

// Reading on from each returned cursor shows every final line once, in
// order, or reports it omitted, whatever the page size, the bounds and how
// the output was split into writes.
func TestSinceShowsEveryLineOnce(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		lines := 1 + rng.IntN(40)
		maxLines, maxBytes, page := 2+rng.IntN(30), 64+rng.IntN(600), 40+rng.IntN(200)
		b := New(maxLines, maxBytes, page)
		var all []string
		var stream strings.Builder
		for i := range lines {
			l := fmt.Sprintf("%d:%s", i, strings.Repeat("x", rng.IntN(30)))
			all = append(all, l)
			stream.WriteString(l + "\n")
		}
		text := stream.String()
		var cursor uint64
		seen := map[uint64]bool{}
		read := func() {
			for {
				r := b.Since(cursor)
				start := cursor
				if r.OmittedTo > start {
					for k := r.OmittedFrom; k < r.OmittedTo; k++ {
						seen[k] = true
					}
					start = r.OmittedTo
				}
				shown := strings.SplitAfter(r.Text, "\n")
				var final []string
				for _, s := range shown {
					if strings.HasSuffix(s, "\n") {
						final = append(final, strings.TrimSuffix(s, "\n"))
					}
				}
				if uint64(len(final)) != r.Cursor-start {
					t.Fatalf("seed %d: read from %d showed %d final lines, cursor moved to %d: %+v", seed, cursor, len(final), r.Cursor, r)
				}
				for k, l := range final {
					idx := start + uint64(k)
					if seen[idx] {
						t.Fatalf("seed %d: line %d shown twice", seed, idx)
					}
					seen[idx] = true
					if want := all[idx]; l != want && !(k == 0 && r.Truncated && strings.HasSuffix(want, l)) {
						t.Fatalf("seed %d: line %d is %q, want %q", seed, idx, l, want)
					}
				}
				cursor = r.Cursor
				if !r.More {
					return
				}
			}
		}
		for len(text) > 0 {
			n := 1 + rng.IntN(min(len(text), 80))
			b.Write([]byte(text[:n]))
			text = text[n:]
			if rng.IntN(3) == 0 {
				read()
			}
		}
		read()
		if cursor != uint64(lines) {
			t.Fatalf("seed %d: cursor %d after %d lines", seed, cursor, lines)
		}
		for k := range uint64(lines) {
			if !seen[k] {
				t.Fatalf("seed %d: line %d neither shown nor omitted", seed, k)
			}
		}
	}
}
