package mcpserver

// Bounds on what an HTTP caller without the token can hold. A global
// ReadTimeout or WriteTimeout would cut the event stream and long sends
// of the token holder, so the bounds are these: a request's headers
// arrive within httpHeaderTimeout; a connection idle between requests is
// closed after httpIdleTimeout; a refused request (401, 403, or a CORS
// preflight, none of which carries the token) is answered with
// Connection: close and must be read and answered within
// refusedRequestBound, body included; and at most -http-max-conns
// connections are open at once, so descriptors remain for the terminals.
// A full cap must not lock the token holder out (connections that send
// nothing, reopened under the header timeout, held every slot once), so
// at the cap a new connection closes the oldest one that has not shown
// the token, idle ones first; only connections that have (and requests
// being served) keep their slot. One source address holds at most
// -http-max-conns-per-source idle connections without the token, its
// oldest closed for its next, so one source cannot take the others' room.

import (
	"context"
	"net"
	"net/http"
	"sync"
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
	// DefaultMaxConns is -http-max-conns' default: room for several
	// clients, each with its event stream and concurrent calls, and for
	// live viewers of the terminals.
	DefaultMaxConns = 256
	// DefaultMaxConnsPerSource is -http-max-conns-per-source's default:
	// a browser opens 6 connections to a host, plus a live view's socket
	// per watched terminal.
	DefaultMaxConnsPerSource = 32
	// capLogEvery: the caps' log line is written at the first event, then
	// at most once per capLogEvery, counting the events in between (under
	// churn it was a line per connection: 159 a second).
	capLogEvery = 10 * time.Second
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
// open, and at most perSource idle ones of one source that have not
// shown the token: at either cap a new connection closes the oldest that has not
// (httplimits.go's comment says why).
type connLimit struct {
	net.Listener
	max, perSource int
	log            zerolog.Logger
	now            func() time.Time

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
	tick  uint64 // orders the connections: accepted, or last served
	// The caps' log: when the last line was written, and the events since.
	logged     time.Time
	suppressed int
}

func newConnLimit(ln net.Listener, max, perSource int, log zerolog.Logger) *connLimit {
	return &connLimit{Listener: ln, max: max, perSource: perSource, log: log, now: time.Now, conns: map[*limitedConn]struct{}{}}
}

// Accept returns the next connection, closing the connections it
// displaces (or itself, when every slot is held by the token holder or by
// a request being served).
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, source: sourceOf(c.RemoteAddr())}
		victims, line, ok := l.admit(lc)
		for _, v := range victims {
			_ = v.Conn.Close()
		}
		if line != nil {
			line()
		}
		if ok {
			return lc, nil
		}
		_ = c.Close()
	}
}

// admit makes room for lc, or refuses it; victims are to be closed, and
// line (when not nil) logs the cap.
func (l *connLimit) admit(lc *limitedConn) (victims []*limitedConn, line func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var which, closed string
	if l.idleWithoutToken(lc.source) >= l.perSource {
		v := l.victim(lc.source)
		victims = append(victims, v)
		l.remove(v)
		which, closed = "-http-max-conns-per-source", v.kind()
	}
	ok = true
	if len(l.conns) >= l.max {
		if v := l.victim(""); v != nil {
			victims = append(victims, v)
			l.remove(v)
			which, closed = "-http-max-conns", v.kind()
		} else {
			which, closed, ok = "-http-max-conns", "the new connection (every slot has shown the token)", false
		}
	}
	if ok {
		l.tick++
		lc.since = l.tick
		l.conns[lc] = struct{}{}
	}
	if which != "" {
		line = l.capEvent(which, closed, lc.source)
	}
	return victims, line, ok
}

// capEvent counts a cap reached and returns its log line when one is
// due: at once for the first, then at most once per capLogEvery, each
// line saying how many went unlogged since the one before.
func (l *connLimit) capEvent(which, closed, source string) func() {
	now := l.now()
	if !l.logged.IsZero() && now.Sub(l.logged) < capLogEvery {
		l.suppressed++
		return nil
	}
	suppressed := l.suppressed
	l.logged, l.suppressed = now, 0
	return func() {
		l.log.Warn().Str("cap", which).Int("max_conns", l.max).Int("max_conns_per_source", l.perSource).
			Str("source", source).Str("closed", closed).Int("suppressed", suppressed).Str("log_every", capLogEvery.String()).
			Msg("HTTP connection cap reached: closing connections that have not shown the token, idle ones and the oldest first")
	}
}

// idleWithoutToken counts source's idle connections that have not shown
// the token. One serving a request is not counted: on loopback every
// client is one source, and a person's live views (sockets served for as
// long as they are open) must not close each other.
func (l *connLimit) idleWithoutToken(source string) int {
	n := 0
	for c := range l.conns {
		if !c.authed && c.busy == 0 && c.source == source {
			n++
		}
	}
	return n
}

// victim is the connection to close for a new one: of those that have
// not shown the token, an idle one before one serving a request, then
// the oldest (accepted, or last served); nil when every connection has
// shown the token. With a source, only that source's idle ones count.
func (l *connLimit) victim(source string) *limitedConn {
	var best *limitedConn
	for c := range l.conns {
		if c.authed || source != "" && (c.source != source || c.busy > 0) {
			continue
		}
		if best == nil || before(c, best) {
			best = c
		}
	}
	return best
}

// before orders victims: idle before serving, then older before younger.
func before(a, b *limitedConn) bool {
	if (a.busy == 0) != (b.busy == 0) {
		return a.busy == 0
	}
	return a.since < b.since
}

// remove takes c's slot back; it is idempotent.
func (l *connLimit) remove(c *limitedConn) { delete(l.conns, c) }

// sourceOf is the address a connection counts against: its IP, an IPv6
// one by its /64 (what one host usually has).
func sourceOf(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		return ip4.String()
	}
	return (&net.IPNet{IP: ta.IP.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// limitedConn is one connection's slot, given back when it is closed.
type limitedConn struct {
	net.Conn
	l      *connLimit
	source string
	once   sync.Once
	// Under l.mu: it has shown the token; requests being served now; its
	// order among the others.
	authed bool
	busy   int
	since  uint64
}

// kind names c for the cap's log line.
func (c *limitedConn) kind() string {
	if c.busy > 0 {
		return "a connection without the token serving a request"
	}
	return "an idle connection without the token"
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.remove(c)
		c.l.mu.Unlock()
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

// connKey is the request context's key of its connection's slot.
type connKey struct{}

// connContext is the http.Server's ConnContext: every request's context
// carries its connection's slot (under TLS, the one beneath).
func (l *connLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	for c != nil {
		if lc, ok := c.(*limitedConn); ok {
			return context.WithValue(ctx, connKey{}, lc)
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	return ctx
}

// track wraps the server's handler: a connection is busy while one of
// its requests is served, and younger once it was.
func (l *connLimit) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, _ := r.Context().Value(connKey{}).(*limitedConn)
		if lc == nil {
			h.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		lc.busy++
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			lc.busy--
			l.tick++
			lc.since = l.tick
			l.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// showedToken marks r's connection as the token holder's: it is never
// closed to make room.
func showedToken(r *http.Request) {
	if lc, _ := r.Context().Value(connKey{}).(*limitedConn); lc != nil {
		lc.l.mu.Lock()
		lc.authed = true
		lc.l.mu.Unlock()
	}
}
