package view

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// tokenStore is the view's one store of bearer tokens, for every kind it
// hands out (a share link, a secret link, an operator's login cookie):
// each token is 128 or 256 random bits, given to its holder once and
// kept only as its SHA-256, so no token is ever held, logged or compared
// as text. A lookup hashes what was presented and finds the hash in a
// map: what the map's comparisons could leak is about a hash of the
// guess, which says nothing about any token's text. Each entry expires
// at the time its kind sets; V is what the kind keeps with it. The
// caller holds its own lock around every call (each kind has more state
// to keep consistent with the store).
type tokenStore[V any] struct {
	now func() time.Time
	by  map[[sha256.Size]byte]*tokenEntry[V]
}

// tokenEntry is one token's record: what its kind keeps, and its end.
type tokenEntry[V any] struct {
	v       V
	expires time.Time
}

func newTokenStore[V any](now func() time.Time) tokenStore[V] {
	if now == nil {
		now = time.Now
	}
	return tokenStore[V]{now: now, by: map[[sha256.Size]byte]*tokenEntry[V]{}}
}

// issue makes a token of bits random bits (128 or 256) for v, living
// until expires, and returns it: the only time it exists as text.
func (s *tokenStore[V]) issue(bits int, v V, expires time.Time) (string, error) {
	raw := make([]byte, bits/8)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	s.by[sha256.Sum256([]byte(token))] = &tokenEntry[V]{v: v, expires: expires}
	return token, nil
}

// find returns token's entry, expired or not (a kind that keeps
// tombstones says why a link no longer works); ok is false for a token
// nobody was given.
func (s *tokenStore[V]) find(token string) (*tokenEntry[V], bool) {
	e, ok := s.by[sha256.Sum256([]byte(token))]
	return e, ok
}

// live returns token's entry unless it expired.
func (s *tokenStore[V]) live(token string) (*tokenEntry[V], bool) {
	e, ok := s.find(token)
	if !ok || s.expired(e) {
		return nil, false
	}
	return e, true
}

func (s *tokenStore[V]) expired(e *tokenEntry[V]) bool { return s.now().After(e.expires) }

// revoke removes token's entry and returns it.
func (s *tokenStore[V]) revoke(token string) (*tokenEntry[V], bool) {
	h := sha256.Sum256([]byte(token))
	e, ok := s.by[h]
	if ok {
		delete(s.by, h)
	}
	return e, ok
}

// drop removes every entry for which gone says so, calling gone once per
// entry, and returns how many it removed.
func (s *tokenStore[V]) drop(gone func(*tokenEntry[V]) bool) int {
	n := 0
	for h, e := range s.by {
		if gone(e) {
			delete(s.by, h)
			n++
		}
	}
	return n
}

// sweep removes the expired entries that may go (every expired one when
// may is nil) and calls ended for each removed.
func (s *tokenStore[V]) sweep(may func(*tokenEntry[V]) bool, ended func(*tokenEntry[V])) {
	s.drop(func(e *tokenEntry[V]) bool {
		if !s.expired(e) || may != nil && !may(e) {
			return false
		}
		if ended != nil {
			ended(e)
		}
		return true
	})
}

// each calls f for every entry.
func (s *tokenStore[V]) each(f func(*tokenEntry[V])) {
	for _, e := range s.by {
		f(e)
	}
}

func (s *tokenStore[V]) len() int { return len(s.by) }
