package remote

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/actors/remote/wire"
)

// A link's id and its call ids are random, so that a peer cannot name a
// link or a pending call it was not told of; a call id is never 0 (a
// push).
func TestLinkAndCallIDsAreRandom(t *testing.T) {
	a, b := newLinkID(), newLinkID()
	if a == b || !strings.HasPrefix(a, wire.LinkPrefix) || len(a) != len(wire.LinkPrefix)+32 {
		t.Fatalf("link ids %q, %q: want the prefix and 128 random bits each", a, b)
	}
	var h hostEntry
	seen := map[uint64]bool{}
	for range 1000 {
		c := h.newCall()
		if c == 0 || seen[c] {
			t.Fatalf("call id %d: zero or repeated", c)
		}
		seen[c] = true
	}
	if seen[1] && seen[2] {
		t.Fatal("call ids look sequential")
	}
}

// A host dialled by name may answer from the name's addresses, with the
// dialled port only.
func TestReplyAddrs(t *testing.T) {
	got, err := replyAddrs(context.Background(), "localhost:7400")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "localhost:7400") || !slices.Contains(got, "127.0.0.1:7400") || slices.Contains(got, "127.0.0.1:7401") {
		t.Fatalf("localhost:7400 answers from %q", got)
	}
	if got, err := replyAddrs(context.Background(), "127.0.0.1:7400"); err != nil || !slices.Equal(got, []string{"127.0.0.1:7400"}) {
		t.Fatalf("127.0.0.1:7400: %q, %v", got, err)
	}
}
