package local

import (
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
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
	if p, ok := c.fresh(1000, t0.Add(pictureReuse-time.Millisecond)); !ok || string(p.Draw) != "with history" {
		t.Fatalf("within a frame: %q, %v; want the kept drawing", p.Draw, ok)
	}
	if p, ok := c.fresh(0, t0); !ok || string(p.Draw) != "screen" {
		t.Fatalf("the other amount: %q, %v", p.Draw, ok)
	}
	if _, ok := c.fresh(1000, t0.Add(pictureReuse)); ok {
		t.Fatal("a drawing older than a frame was reused")
	}
	if _, ok := c.fresh(500, t0); ok {
		t.Fatal("a drawing served another amount of scrollback")
	}
	c.keep(500, messages.Picture{Draw: []byte("other"), Seq: 8}, t0)
	if _, ok := c.fresh(1000, t0); ok {
		t.Fatal("a third amount did not replace the oldest slot")
	}
	if p, ok := c.fresh(0, t0); !ok || p.Seq != 7 {
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
