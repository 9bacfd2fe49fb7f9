package view

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// The one token store: tokens of the asked strength, kept only as
// hashes, found while live, expired by the store's clock, revoked, swept
// with what each kind does at the end.
func TestTokenStore(t *testing.T) {
	now := time.Unix(1000, 0)
	s := newTokenStore[string](func() time.Time { return now })
	short, err := s.issue(128, "link", now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	long, _ := s.issue(256, "login", now.Add(time.Hour))
	for token, bits := range map[string]int{short: 128, long: 256} {
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || len(raw)*8 != bits {
			t.Fatalf("token %q: %d bits, %v; want %d", token, len(raw)*8, err, bits)
		}
	}
	for h := range s.by {
		if strings.Contains(string(h[:]), short) || h == sha256.Sum256(nil) {
			t.Fatal("a token kept as text")
		}
	}
	if e, ok := s.live(short); !ok || e.v != "link" {
		t.Fatalf("live(short) = %v, %v", e, ok)
	}
	if _, ok := s.live(short + "x"); ok {
		t.Fatal("a token nobody was given was found")
	}
	now = now.Add(time.Minute + time.Nanosecond)
	if _, ok := s.live(short); ok {
		t.Fatal("an expired token was live")
	}
	if _, ok := s.find(short); !ok {
		t.Fatal("find lost an expired token before the sweep (tombstones need it)")
	}
	var ended []string
	s.sweep(nil, func(e *tokenEntry[string]) { ended = append(ended, e.v) })
	if len(ended) != 1 || ended[0] != "link" || s.len() != 1 {
		t.Fatalf("sweep ended %v, %d left; want the link, 1 left", ended, s.len())
	}
	if e, ok := s.revoke(long); !ok || e.v != "login" || s.len() != 0 {
		t.Fatal("revoke did not remove the login")
	}
	if _, ok := s.revoke(long); ok {
		t.Fatal("a token revoked twice")
	}
}

// Links, logins and secret links share the store under their own locks:
// many at once, under -race.
func TestTokenKindsConcurrently(t *testing.T) {
	links := NewLinks(nil)
	ops := newOperators("tok", time.Hour, time.Now)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := messages.SessionID(fmt.Sprintf("pty-%d", i))
			for range 50 {
				l, err := links.Share(messages.NewOwner("o"), id, "pair", 0)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := links.Check(l.Token, id); err != nil {
					t.Error(err)
				}
				if _, err := ops.login(); err != nil {
					t.Error(err)
				}
				if i%2 == 0 {
					links.Unshare(id)
				}
			}
		}()
	}
	wg.Wait()
}

// A secret link opens one entry: once a secret went in through it, neither
// a second claim (a double submit, a second page) nor a check finds it
// live, and a new link to the same prompt is needed for another try.
func TestSecretLinkSingleUse(t *testing.T) {
	s := NewSecrets(nil)
	p := messages.SecretPrompt{Session: "pty-1", Pgid: 10, TID: 11, InputSeq: 5, Reader: "sudo", Line: "[sudo] password for ada:"}
	tok, err := s.Mint(messages.NewOwner("agent"), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.claim(tok, "pty-1"); err != nil {
		t.Fatalf("the first entry: %v", err)
	}
	s.release(tok, true)
	if _, err := s.claim(tok, "pty-1"); !errors.Is(err, ErrSecretLinkUsed) {
		t.Fatalf("a second entry through a used link: %v; want ErrSecretLinkUsed", err)
	}
	if _, err := s.Check(tok, "pty-1"); !errors.Is(err, ErrSecretLinkUsed) {
		t.Fatalf("check of a used link: %v; want ErrSecretLinkUsed", err)
	}
	if s.Revoke(tok) {
		t.Fatal("a used link was revoked as if live")
	}
}
