package endpoint

import (
	"context"
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

// dialled records, per address the endpoint dialled, the TLS identity
// (Identity) of the peer its newest successful handshake verified there:
// the host a client dialled is the one whose identity its replies must
// carry.
type dialled struct {
	mu sync.Mutex
	id map[string]string
}

func (d *dialled) get(addr string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.id[addr]
}

// recordingCreds hands the endpoint's client credentials each connection
// the library dials, and records its peer's identity under the address
// dialled (gRPC's authority: the library dials a PID's address as it is).
type recordingCreds struct {
	credentials.TransportCredentials
	d *dialled
}

func (c recordingCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		return conn, info, err // the identity verified before still stands
	}
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	c.d.id[authority] = Identity(info)
	return conn, info, nil
}

func (c recordingCreds) Clone() credentials.TransportCredentials {
	return recordingCreds{c.TransportCredentials.Clone(), c.d}
}
