package view

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// cookieName is the console's login cookie.
const cookieName = "ptyactor_console"

// loginTTL is how long a login cookie lasts.
const loginTTL = 12 * time.Hour

// operators checks the operator token and the login cookies it was
// exchanged for. Only hashes are kept.
type operators struct {
	token [sha256.Size]byte // the operator token's hash; zero: none
	set   bool
	now   func() time.Time

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]time.Time // a cookie's hash: its expiry
}

func newOperators(token string, now func() time.Time) *operators {
	o := &operators{now: now, sessions: map[[sha256.Size]byte]time.Time{}}
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

// login makes a cookie value for a holder of the operator token.
func (o *operators) login() (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	v := base64.RawURLEncoding.EncodeToString(raw[:])
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	for h, exp := range o.sessions {
		if now.After(exp) {
			delete(o.sessions, h)
		}
	}
	o.sessions[sha256.Sum256([]byte(v))] = now.Add(loginTTL)
	return v, nil
}

// request reports whether r carries the operator's login: its cookie,
// or the token as a bearer.
func (o *operators) request(r *http.Request) bool {
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && o.tokenOK(bearer) {
		return true
	}
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return false
	}
	h := sha256.Sum256([]byte(c.Value))
	o.mu.Lock()
	defer o.mu.Unlock()
	exp, ok := o.sessions[h]
	return ok && !o.now().After(exp)
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
