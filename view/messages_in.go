package view

import (
	"context"
	"errors"
	"io"
)

// smallMessage is what a page's message takes almost always (keys, a
// resize, a take): read into a buffer of its own, without asking anyone.
const smallMessage = 64 << 10

// largeReader is the server's one buffer for page messages beyond
// smallMessage (a paste; or an attacker's 16 MiB sent in fragments,
// whose size no header tells), made at the first and kept: however many
// sockets send large messages at once, the server reads one at a time
// into it and copies out only a message that fits. Each socket reading
// for itself into a growing buffer allocated 16 MiB per refused message
// (every doubling up to past the 4 MiB bound), and four at once grew the
// server's peak RSS by 13 to 38 MiB (TestHugeMessageClosed); now by 5 MiB.
type largeReader struct {
	slot chan struct{} // holds the buffer
	buf  []byte        // maxMessage+smallMessage bytes once made
}

func newLargeReader() *largeReader { return &largeReader{slot: make(chan struct{}, 1)} }

// errMessageTooBig: more than maxMessage bytes (the socket's own read
// limit closes it with 1009 first; this guards the buffer).
var errMessageTooBig = errors.New("view: page message too big")

// readMessage reads one page message from r.
func (l *largeReader) readMessage(ctx context.Context, r io.Reader) ([]byte, error) {
	small := make([]byte, smallMessage)
	n, err := io.ReadFull(r, small)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return small[:n], nil
	case err != nil:
		return nil, err
	}
	select {
	case l.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-l.slot }()
	if l.buf == nil {
		// Room past the socket's limit, so the socket's limit, which
		// closes with 1009, is what a longer message meets.
		l.buf = make([]byte, maxMessage+smallMessage)
	}
	n = copy(l.buf, small)
	for {
		if n == len(l.buf) {
			return nil, errMessageTooBig
		}
		m, err := r.Read(l.buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return append([]byte(nil), l.buf[:n]...), nil
		}
		if err != nil {
			return nil, err
		}
	}
}
