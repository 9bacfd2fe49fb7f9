package view

import (
	"crypto/subtle"
	"errors"
	"sync"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// DefaultLinkTTL is how long a share link lives unless its maker says.
const DefaultLinkTTL = time.Hour

// MaxLinkTTL bounds a share link's life.
const MaxLinkTTL = 7 * 24 * time.Hour

// ErrLinkRefused: the token names no live link for this session (wrong,
// expired, revoked, or another session's). One error for all: a caller
// learns nothing about other links.
var ErrLinkRefused = errors.New("view: the share link is not valid for this session")

// Link is a share link as its maker sees it. The token is the secret: it
// goes in the URL's fragment, which a browser never sends to a server.
type Link struct {
	Session messages.SessionID
	Owner   messages.Owner
	Label   string
	Token   string
	Expires time.Time
	// done is closed when the link is revoked (Unshare) or swept after
	// it expired: the sockets open with it are closed then.
	done chan struct{}
}

// Done is closed once the link is revoked (or, after it expired, when
// its set swept it: a watcher of an expiry also keeps Expires). A Link
// made outside Links has none (nil: never closed).
func (l Link) Done() <-chan struct{} { return l.done }

// Links holds the share links: each lets its holder watch one session
// of one owner, read-only, until it expires or is revoked. Its tokens
// are kept as the view keeps every token (tokenStore): hashed, never as
// text.
type Links struct {
	mu    sync.Mutex
	store tokenStore[*Link] // Token empty
}

// NewLinks makes an empty set; now is the clock (time.Now when nil).
func NewLinks(now func() time.Time) *Links {
	return &Links{store: newTokenStore[*Link](now)}
}

// Share makes a link to watch session (of owner), labelled for the page,
// living ttl (DefaultLinkTTL when zero; at most MaxLinkTTL). The label
// follows the label rule (messages.CheckLabel).
func (l *Links) Share(owner messages.Owner, session messages.SessionID, label string, ttl time.Duration) (Link, error) {
	if err := messages.CheckLabel("share label", label); err != nil {
		return Link{}, err
	}
	switch {
	case ttl == 0:
		ttl = DefaultLinkTTL
	case ttl < 0 || ttl > MaxLinkTTL:
		return Link{}, messages.InvalidArgument("ttl must be between 1 ms and %s", MaxLinkTTL)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep()
	link := &Link{Session: session, Owner: owner, Label: label, Expires: l.store.now().Add(ttl), done: make(chan struct{})}
	token, err := l.store.issue(128, link, link.Expires)
	if err != nil {
		return Link{}, err
	}
	out := *link
	out.Token = token
	return out, nil
}

// Unshare revokes every link to session and returns how many there were.
// Closing a session should call it.
func (l *Links) Unshare(session messages.SessionID) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.store.drop(func(e *tokenEntry[*Link]) bool {
		if e.v.Session != session {
			return false
		}
		close(e.v.done)
		return true
	})
}

// Check returns the link token opens for session, or ErrLinkRefused.
func (l *Links) Check(token string, session messages.SessionID) (Link, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.store.live(token)
	if !ok || subtle.ConstantTimeCompare([]byte(e.v.Session), []byte(session)) != 1 {
		return Link{}, ErrLinkRefused
	}
	return *e.v, nil
}

// Live reports whether link (from Check) still opens its session: not
// revoked, not expired.
func (l *Links) Live(link Link) bool {
	select {
	case <-link.done:
		return false
	default:
	}
	return !l.store.now().After(link.Expires)
}

// Left is how long link has until it expires, by the set's clock.
func (l *Links) Left(link Link) time.Duration { return link.Expires.Sub(l.store.now()) }

// sweep drops expired links, closing their sockets; the caller holds mu.
func (l *Links) sweep() {
	l.store.sweep(nil, func(e *tokenEntry[*Link]) { close(e.v.done) })
}
