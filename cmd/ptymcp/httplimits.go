package main

// Bounds on what an HTTP caller without the token can hold. A global
// ReadTimeout or WriteTimeout would cut the event stream and long sends
// of the token holder, so the bounds are these: a request's headers
// arrive within httpHeaderTimeout; a connection idle between requests is
// closed after httpIdleTimeout; a refused request (401, 403, or a CORS
// preflight, none of which carries the token) is answered with
// Connection: close and must be read and answered within
// refusedRequestBound, body included; and at most -http-max-conns
// connections are open at once, one more being closed as soon as it is
// accepted, so descriptors remain for the terminals and for the token
// holder once the cap frees up.

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

const (
	// httpHeaderTimeout bounds the TLS handshake and a request's headers.
	httpHeaderTimeout = 10 * time.Second
	// httpIdleTimeout closes a keep-alive connection with no request for
	// this long (longer than common clients' own idle timeouts, 90 s in
	// Go's, so that they close first).
	httpIdleTimeout = 2 * time.Minute
	// refusedRequestBound is how long a refused request's body may take
	// to arrive (the server reads up to 256 KiB of it) and its answer to
	// be written.
	refusedRequestBound = 5 * time.Second
	// defaultMaxConns is -http-max-conns' default: room for several
	// clients, each with its event stream and concurrent calls, and for
	// live viewers of the terminals.
	defaultMaxConns = 256
)

// closeAfterRefusal marks the answer to a request that did not prove the
// token: the connection is closed after it (for HTTP/2, a GOAWAY), and
// the rest of its body must arrive within refusedRequestBound.
func closeAfterRefusal(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	rc := http.NewResponseController(w)
	end := time.Now().Add(refusedRequestBound)
	_ = rc.SetReadDeadline(end)
	_ = rc.SetWriteDeadline(end)
}

// connLimit is a listener that keeps at most max accepted connections
// open; one beyond is closed at once.
type connLimit struct {
	net.Listener
	slots chan struct{}
	full  atomic.Bool // refusing: logged once per episode
	log   zerolog.Logger
}

func newConnLimit(ln net.Listener, max int, log zerolog.Logger) *connLimit {
	return &connLimit{Listener: ln, slots: make(chan struct{}, max), log: log}
}

// Accept returns the next connection within the cap, closing those
// beyond it.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, l: l}, nil
		default:
		}
		if !l.full.Swap(true) {
			l.log.Warn().Int("max_conns", cap(l.slots)).Str("remote", c.RemoteAddr().String()).
				Msg("HTTP connection cap reached: closing new connections until one ends (-http-max-conns)")
		}
		_ = c.Close()
	}
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		<-c.l.slots
		c.l.full.Store(false)
	})
	return err
}

// CloseWrite lets the server half-close before it closes (net/http does
// after a request whose body it did not read to the end).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
