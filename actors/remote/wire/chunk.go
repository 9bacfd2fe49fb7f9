package wire

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
)

// MaxChunk bounds the payload of one message on the wire: a Request or
// Reply whose encoding is larger travels as Chunks of at most this many
// bytes. With the endpoints' batch size (a few dozen messages) a gRPC
// message stays far below gRPC's 4 MiB receive limit, over which the
// endpoint would drop a whole batch without a word.
const MaxChunk = 32 << 10

// Split returns what carries m on the wire: m itself when its encoding
// fits MaxChunk, else its encoding cut into Chunks of call, in order.
func Split(call uint64, m proto.Message) ([]proto.Message, error) {
	if proto.Size(m) <= MaxChunk {
		return []proto.Message{m}, nil
	}
	data, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("wire: encode %T: %w", m, err)
	}
	out := make([]proto.Message, 0, (len(data)+MaxChunk-1)/MaxChunk)
	for seq := uint32(0); len(data) > 0; seq++ {
		n := min(MaxChunk, len(data))
		out = append(out, &Chunk{Call: call, Seq: seq, Last: n == len(data), Data: data[:n:n]})
		data = data[n:]
	}
	return out, nil
}

// ErrChunk matches every reassembly failure: a gap in the sequence, a
// piece or message over its bound, too many messages in pieces at once.
var ErrChunk = errors.New("wire: bad chunk")

// Assembler puts chunked messages back together, per call. It is bounded:
// a message may not exceed maxBytes, and at most maxPending messages may be
// in pieces at once. It is not safe for concurrent use (an actor owns it).
type Assembler struct {
	maxBytes, maxPending int
	parts                map[uint64]*partial
}

type partial struct {
	next uint32
	buf  []byte
}

// NewAssembler returns an Assembler with the given bounds.
func NewAssembler(maxBytes, maxPending int) *Assembler {
	return &Assembler{maxBytes: maxBytes, maxPending: maxPending, parts: map[uint64]*partial{}}
}

// Add takes the next piece of a call's message. It returns the whole
// encoding once c is the last piece, nil before. On an error the call's
// pieces so far are dropped.
func (a *Assembler) Add(c *Chunk) ([]byte, error) {
	p := a.parts[c.Call]
	if p == nil {
		if len(a.parts) >= a.maxPending {
			return nil, fmt.Errorf("%w: more than %d messages in pieces at once", ErrChunk, a.maxPending)
		}
		p = &partial{}
		a.parts[c.Call] = p
	}
	switch {
	case c.Seq != p.next:
		delete(a.parts, c.Call)
		return nil, fmt.Errorf("%w: call %d: piece %d, want %d", ErrChunk, c.Call, c.Seq, p.next)
	case len(c.Data) > MaxChunk || len(p.buf)+len(c.Data) > a.maxBytes:
		delete(a.parts, c.Call)
		return nil, fmt.Errorf("%w: call %d: message over %d bytes", ErrChunk, c.Call, a.maxBytes)
	}
	p.next++
	p.buf = append(p.buf, c.Data...)
	if !c.Last {
		return nil, nil
	}
	delete(a.parts, c.Call)
	return p.buf, nil
}

// Pending is how many messages are in pieces.
func (a *Assembler) Pending() int { return len(a.parts) }
