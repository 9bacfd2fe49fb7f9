package mcpserver

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// callsWait bounds how long the server waits, once its stdio client hung
// up or a signal came, for the calls still running: they were cancelled,
// and one that has not returned by then is left behind (the shutdown
// closes its terminal all the same).
const callsWait = 10 * time.Second

// serveStdio serves the one MCP session on t (stdin and stdout) until the
// client hangs up or ctx ends, then ends the calls still running and waits
// for them at most callsWait. The SDK's own wait for them has no bound.
func serveStdio(ctx context.Context, s *binding, t mcp.Transport, log zerolog.Logger) error {
	et := &eofTransport{Transport: t, eof: make(chan struct{})}
	ran := make(chan error, 1)
	go func() { ran <- s.mcp.Run(ctx, et) }()
	end := func(err error) error {
		if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
			err = nil // a signal, or the client hung up: both are normal ends
		}
		return err
	}
	select {
	case err := <-ran:
		return end(err)
	case <-et.eof:
	case <-ctx.Done():
	}
	s.endCalls()
	timer := time.NewTimer(callsWait)
	defer timer.Stop()
	select {
	case err := <-ran:
		return end(err)
	case <-timer.C:
		log.Warn().Dur("waited", callsWait).Msg("calls still running after the client left: shutting down without them")
		return nil
	}
}

// eofTransport is a transport whose eof is closed once a read of its
// connection fails: the client hung up.
type eofTransport struct {
	mcp.Transport
	once sync.Once
	eof  chan struct{}
}

func (t *eofTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &eofConn{Connection: c, t: t}, nil
}

type eofConn struct {
	mcp.Connection
	t *eofTransport
}

func (c *eofConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.t.once.Do(func() { close(c.t.eof) })
	}
	return m, err
}
