package view

// Who may watch: share links (their label, expiry, revocation, another
// session's) and the socket's Origin and the operator's login.

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Share links: one opens its session's view; an expired, a revoked, a
// wrong or a missing token, and another session's, are refused alike.
func TestShareLinks(t *testing.T) {
	s := serve(t)
	ctx := testkit.Ctx(t)
	link, err := s.links.Share(s.owner, s.sh.ID(), "build for ana", 0)
	if err != nil || len(link.Token) < 22 || !link.Expires.After(s.clock()) {
		t.Fatalf("share: %+v, %v", link, err)
	}
	c, err := s.dial(s.srv.URL, false, hello{Token: link.Token})
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, c: c}
	hi, err := r.next(ctx)
	if err != nil || hi["t"] != "hello" || hi["label"] != "build for ana" {
		t.Fatalf("hello over a link: %v, %v", hi, err)
	}
	other, err := s.links.Share(s.owner, "another-session", "x", 0)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(why, token string) {
		t.Helper()
		c, err := s.dial(s.srv.URL, false, hello{Token: token})
		if err != nil {
			t.Fatalf("%s: dial: %v", why, err)
		}
		r := &reader{t: t, c: c}
		m, err := r.next(ctx)
		if err != nil || m["t"] != "error" || m["code"] != "forbidden" {
			t.Fatalf("%s: %v, %v; want forbidden", why, m, err)
		}
		if _, err := r.next(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("%s: then %v, want the socket closed", why, err)
		}
	}
	refused("no token", "")
	refused("a wrong token", strings.Repeat("A", 22))
	refused("another session's token", other.Token)
	s.advance(2 * time.Hour)
	refused("an expired token", link.Token)
	s.advance(-2 * time.Hour)
	if n := s.links.Unshare(s.sh.ID()); n != 1 {
		t.Fatalf("unshare revoked %d links, want 1", n)
	}
	refused("a revoked token", link.Token)
	if _, err := s.links.Share(s.owner, s.sh.ID(), "", 0); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("an empty label: %v", err)
	}
}

// A page of another origin can neither call the API nor open the socket,
// and nothing is served without a login.
func TestOriginAndLogin(t *testing.T) {
	s := serve(t)
	if _, err := s.dial("https://evil.example", true, hello{}); err == nil {
		t.Fatal("a WebSocket from another origin was accepted")
	}
	get := func(path, origin string, cookie *http.Cookie) int {
		req, _ := http.NewRequest("GET", s.srv.URL+path, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if code := get("/api/sessions", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("sessions without a login: %d", code)
	}
	login := func(token, origin string) *http.Response {
		req, _ := http.NewRequest("POST", s.srv.URL+"/api/login", strings.NewReader(`{"token":"`+token+`"}`))
		req.Header.Set("Origin", origin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := login(opToken, "https://evil.example"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a login from another origin: %d", res.StatusCode)
	}
	if res := login("wrong", s.srv.URL); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", res.StatusCode)
	}
	res := login(opToken, s.srv.URL)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if res.StatusCode != http.StatusNoContent || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d, cookie %+v", res.StatusCode, cookie)
	}
	if code := get("/api/sessions", s.srv.URL, cookie); code != http.StatusOK {
		t.Fatalf("sessions with the cookie: %d", code)
	}
	if code := get("/api/sessions", "https://evil.example", cookie); code != http.StatusForbidden {
		t.Fatalf("sessions from another origin with the cookie: %d", code)
	}
}
