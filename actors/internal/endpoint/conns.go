package endpoint

import (
	"errors"
	"net"
	"sync"

	"google.golang.org/grpc/credentials"
)

// errClosed refuses a connection accepted while the endpoint closes.
var errClosed = errors.New("endpoint: closing")

// connSet holds the server's accepted connections from their first byte,
// so Close can end them: the library keeps no handle on them, and gRPC's
// Stop waits for connections still in their handshake.
type connSet struct {
	mu     sync.Mutex
	open   map[*trackedConn]struct{}
	closed bool
}

// add tracks raw until it is closed; after closeAll it closes raw instead.
func (s *connSet) add(raw net.Conn) (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = raw.Close()
		return nil, errClosed
	}
	c := &trackedConn{Conn: raw, set: s}
	s.open[c] = struct{}{}
	return c, nil
}

// closeAll closes every tracked connection and refuses new ones.
func (s *connSet) closeAll() {
	s.mu.Lock()
	open := s.open
	s.open, s.closed = nil, true
	s.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	set  *connSet
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.open, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}

// trackingCreds hands the server's credentials each accepted connection
// through the set: ServerHandshake is the first thing gRPC does with one.
type trackingCreds struct {
	credentials.TransportCredentials
	set *connSet
}

func (c trackingCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	tracked, err := c.set.add(raw)
	if err != nil {
		return nil, nil, err
	}
	return c.TransportCredentials.ServerHandshake(tracked)
}

func (c trackingCreds) Clone() credentials.TransportCredentials {
	return trackingCreds{c.TransportCredentials.Clone(), c.set}
}
