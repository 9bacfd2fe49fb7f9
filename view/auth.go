package view

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// cookieName is the console's login cookie.
const cookieName = "ptyactor_console"

// DefaultLoginTTL is how long a login cookie lasts unless
// Options.LoginTTL says.
const DefaultLoginTTL = 12 * time.Hour

// operators checks the operator token and the login cookies it was
// exchanged for, kept as every token of the view is (tokenStore). A login
// ends on the server at its expiry or at logout, whatever the browser
// keeps: its sockets are closed then (login.done).
type operators struct {
	token [sha256.Size]byte // the operator token's hash; zero: none
	set   bool
	now   func() time.Time
	ttl   time.Duration

	mu       sync.Mutex
	sessions tokenStore[*login] // by the cookie's hash
}

// login is one live login.
type login struct {
	expires time.Time
	done    chan struct{} // closed when the login ends (logout, expiry swept)
}

func newOperators(token string, ttl time.Duration, now func() time.Time) *operators {
	o := &operators{now: now, ttl: ttl, sessions: newTokenStore[*login](now)}
	if token != "" {
		o.token, o.set = sha256.Sum256([]byte(token)), true
	}
	return o
}

// tokenOK compares a presented token with the operator's in constant time.
func (o *operators) tokenOK(token string) bool {
	if !o.set || token == "" {
		return false
	}
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], o.token[:]) == 1
}

// login makes a cookie value for a holder of the operator token: a new
// one at every login (256 random bits), so a value planted before it
// (fixation) is never the one logged in.
func (o *operators) login() (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sweep()
	l := &login{expires: o.now().Add(o.ttl), done: make(chan struct{})}
	return o.sessions.issue(256, l, l.expires)
}

// logout ends r's cookie's login on the server; it reports whether
// there was one.
func (o *operators) logout(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.sessions.revoke(c.Value)
	if ok {
		close(e.v.done)
	}
	return ok
}

// sweep ends the expired logins; the caller holds mu.
func (o *operators) sweep() {
	o.sessions.sweep(nil, func(e *tokenEntry[*login]) { close(e.v.done) })
}

// request reports whether r carries the operator's login: its cookie,
// or the token as a bearer.
func (o *operators) request(r *http.Request) bool {
	ok, _ := o.auth(r)
	return ok
}

// auth is request, with the cookie's login (nil for a bearer: the token
// does not expire).
func (o *operators) auth(r *http.Request) (bool, *login) {
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && o.tokenOK(bearer) {
		return true, nil
	}
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return false, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.sessions.live(c.Value)
	if !ok {
		return false, nil
	}
	return true, e.v
}

// live reports whether l is still logged in (not logged out, not
// expired).
func (o *operators) live(l *login) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case <-l.done:
		return false
	default:
	}
	return !o.now().After(l.expires)
}

// sameOrigin checks a browser's Origin against the host it asked: a page
// of another site must not use the console with its person's cookie, nor
// open its WebSocket. A request without Origin (not from a page) passes:
// it carries no cookie a page could borrow, only a bearer token.
func sameOrigin(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(a, origin) {
			return true
		}
	}
	return false
}

// hostAllowed is the DNS-rebinding check: a server listening on loopback
// answers only requests that name a loopback host (localhost, a loopback
// IP) or one of allowed. A page of evil.example whose name was made to
// resolve to 127.0.0.1 is same-origin with itself, so the Origin check
// passes it; its requests still say Host: evil.example. Off loopback the
// Host is whatever name reaches the server (its TLS certificate's).
func hostAllowed(r *http.Request, allowed []string) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	ta, ok := la.(*net.TCPAddr)
	if !ok || !ta.IP.IsLoopback() {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// Loopback reports whether addr (host:port) listens on a loopback
// address only: the console then needs no TLS.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
