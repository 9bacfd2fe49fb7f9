package view

import (
	"encoding/json"
	"sync"

	"github.com/ptyactor/ptyactor/messages"
)

// pictureMessages encodes a picture's message once for every viewer that
// is sent the same picture. Viewers joining by the hundred during a flood
// are handed one drawing (the backend reuses it for a frame), whose 1000
// lines of scrollback in colour cost a JSON escape of every escape
// sequence: done per viewer, that was the server's largest cost in
// TestLoadViewersChurnDuringFlood after the record read-backs were gone.
type pictureMessages struct {
	mu   sync.Mutex
	last [4]encodedPicture
	next int
}

type encodedPicture struct {
	draw *byte // the drawing's first byte: the same picture, not an equal one
	n    int
	seq  uint64
	gap  bool
	msg  []byte
}

// message returns the picture's message, encoded at most once per
// picture and gap.
func (c *pictureMessages) message(p *messages.Picture, gap bool) ([]byte, error) {
	var draw *byte
	if len(p.Draw) > 0 {
		draw = &p.Draw[0]
	}
	c.mu.Lock()
	for _, e := range c.last {
		if e.msg != nil && draw != nil && e.draw == draw && e.n == len(p.Draw) && e.seq == p.Seq && e.gap == gap {
			c.mu.Unlock()
			return e.msg, nil
		}
	}
	c.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"t": "picture", "seq": p.Seq, "rows": p.Rows, "cols": p.Cols, "data": string(p.Draw), "gap": gap})
	if err != nil || draw == nil {
		return msg, err
	}
	c.mu.Lock()
	c.last[c.next] = encodedPicture{draw: draw, n: len(p.Draw), seq: p.Seq, gap: gap, msg: msg}
	c.next = (c.next + 1) % len(c.last)
	c.mu.Unlock()
	return msg, nil
}
