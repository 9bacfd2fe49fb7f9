package adversarial

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/tools"
)

// closeBound is how long a test waits for a socket to be closed; the
// guarantee is a second (the figure is logged), the bound is generous
// for a loaded machine.
const closeBound = 10 * time.Second

// closedWithin waits for the viewer's drained socket to end with a close
// from the server whose reason contains want, and returns how long after
// since it came.
func closedWithin(t *testing.T, done <-chan error, since time.Time, want string) time.Duration {
	t.Helper()
	select {
	case err := <-done:
		took := time.Since(since)
		code, reason := CloseOf(err)
		if code != websocket.StatusPolicyViolation || !strings.Contains(reason, want) {
			t.Fatalf("the socket ended with %v (close %d %q); want a policy-violation close saying %q", err, code, reason, want)
		}
		return took
	case <-time.After(closeBound):
		t.Fatalf("the socket is still open %v later; want it closed (%q)", closeBound, want)
		return 0
	}
}

// A share link revoked (terminal_unshare) closes the sockets already
// open with it at once, with a close reason, and they receive none of
// what the session prints next. Before the fix the link was checked only
// at the socket's hello: the viewer went on streaming.
func TestRevokedLinkClosesOpenViewer(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	token, _ := c.Share(id, map[string]any{"label": "revoked"})
	v, err := s.Watch(ctx(t), id, token, DialOptions{NoOrigin: false})
	if err != nil {
		t.Fatal(err)
	}
	if v.Hello["readOnly"] != true {
		t.Fatalf("a link's hello: %v", v.Hello)
	}
	text, done := v.Drain(ctx(t))
	c.Send(id, "echo before-$((1+1))")
	waitFor(t, 15*time.Second, "the link's viewer sees the output", func() bool { return strings.Contains(text(), "before-2") })

	at := time.Now()
	if r := c.OK(tools.TerminalUnshare, map[string]any{"sessionId": id}); !strings.Contains(r.Text, "1") {
		t.Fatalf("unshare: %q", r.Text)
	}
	took := closedWithin(t, done, at, "revoked")
	t.Logf("revoked link: socket closed %v after terminal_unshare", took)
	c.Send(id, "echo after-$((2+2))")
	if strings.Contains(text(), "after-4") {
		t.Fatal("the revoked link's viewer received output after the revocation")
	}
	// And the revoked link opens nothing any more.
	if _, err := s.Watch(ctx(t), id, token, DialOptions{}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("a revoked link's new socket: %v", err)
	}
}

// A share link that expires closes the sockets open with it, with a close
// reason.
func TestExpiredLinkClosesOpenViewer(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	const ttl = 3 * time.Second
	token, _ := c.Share(id, map[string]any{"label": "expiring", "ttl_ms": ttl.Milliseconds()})
	made := time.Now()
	v, err := s.Watch(ctx(t), id, token, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, done := v.Drain(ctx(t))
	took := closedWithin(t, done, made.Add(ttl), "expired")
	t.Logf("expired link: socket closed %v after the link's expiry", took)
}

// Logout ends the login on the server: the cookie is refused afterwards
// (a copy of it replayed too), a socket open with it is closed with a
// reason, and the answer clears the browser's cookie. Before the fix
// there was no logout: a cookie lived 12 h on the server, whatever the
// person did.
func TestLogoutKillsCookie(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	if r := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", CookieHeader(cookie)); r.Status != http.StatusOK {
		t.Fatalf("sessions with the cookie: HTTP %d", r.Status)
	}
	v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie})
	if err != nil {
		t.Fatal(err)
	}
	_, done := v.Drain(ctx(t))

	// A foreign page cannot log the operator out (nor anything else).
	if r := s.Do(http.MethodPost, "/api/logout", nil, "Cookie", CookieHeader(cookie), "Origin", "http://evil.example"); r.Status != http.StatusForbidden {
		t.Fatalf("logout from a foreign origin: HTTP %d", r.Status)
	}
	at := time.Now()
	r := s.Do(http.MethodPost, "/api/logout", nil, "Cookie", CookieHeader(cookie), "Origin", s.Origin())
	if r.Status != http.StatusNoContent {
		t.Fatalf("logout: HTTP %d %q", r.Status, r.Body)
	}
	if cleared := LoginCookie(r); cleared == nil || cleared.MaxAge >= 0 || cleared.Value != "" {
		t.Fatalf("logout does not clear the browser's cookie: %v", r.Header.Values("Set-Cookie"))
	}
	took := closedWithin(t, done, at, "logged out")
	t.Logf("logout: operator's socket closed %v after", took)
	if r := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", CookieHeader(cookie)); r.Status != http.StatusUnauthorized {
		t.Fatalf("the cookie replayed after logout: HTTP %d", r.Status)
	}
	if _, res, err := s.Dial(ctx(t), "/api/watch/"+id, DialOptions{Cookie: cookie}); err == nil {
		// The upgrade itself may pass (a link's page brings its token in
		// the hello); the hello must then be refused.
		_ = res
		if _, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie}); err == nil {
			t.Fatal("a socket opened with the logged-out cookie")
		}
	}
	// Logging out without a login is harmless.
	if r := s.Do(http.MethodPost, "/api/logout", nil, "Origin", s.Origin()); r.Status != http.StatusNoContent {
		t.Fatalf("logout without a cookie: HTTP %d", r.Status)
	}
}

// A login's cookie expires on the server (-console-login-ttl): refused
// afterwards, and a socket open with it closed.
func TestLoginExpiryKillsCookie(t *testing.T) {
	const ttl = 3 * time.Second
	s := Start(t, Options{Args: []string{"-console-login-ttl", ttl.String()}})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	made := time.Now()
	if cookie.MaxAge != int(ttl/time.Second) {
		t.Fatalf("cookie Max-Age %d, want %d", cookie.MaxAge, int(ttl/time.Second))
	}
	v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie})
	if err != nil {
		t.Fatal(err)
	}
	_, done := v.Drain(ctx(t))
	took := closedWithin(t, done, made.Add(ttl), "expired")
	t.Logf("login expiry: operator's socket closed %v after", took)
	if r := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", CookieHeader(cookie)); r.Status != http.StatusUnauthorized {
		t.Fatalf("an expired cookie: HTTP %d", r.Status)
	}
}

// The console's pages, API and socket refuse a Host that is not the
// loopback listener's (DNS rebinding: a page of evil.example resolved to
// 127.0.0.1 is same-origin with itself, and its requests carry Host:
// evil.example), as /mcp does. Before the fix only /mcp refused it.
func TestConsoleRefusesForeignHost(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	_, port, _ := strings.Cut(s.Host(), ":")
	evil := "evil.example:" + port
	for _, tc := range []struct {
		method, path string
		hdr          []string
	}{
		{http.MethodGet, "/", nil},
		{http.MethodGet, "/s/" + id, nil},
		{http.MethodGet, "/assets/console.js", nil},
		{http.MethodGet, "/api/sessions", []string{"Cookie", CookieHeader(cookie)}},
		{http.MethodGet, "/api/sessions", []string{"Authorization", "Bearer " + s.Token}},
		{http.MethodPost, "/api/login", []string{"Content-Type", "application/json"}},
		{http.MethodPost, "/mcp", []string{"Authorization", "Bearer " + s.Token, "Content-Type", "application/json"}},
	} {
		// The rebinding page's own origin: same-origin for the browser.
		hdr := append([]string{"Host", evil, "Origin", "http://" + evil}, tc.hdr...)
		body := []byte(nil)
		if tc.method == http.MethodPost {
			body = []byte(`{"token":"` + s.Token + `"}`)
		}
		r := s.Do(tc.method, tc.path, body, hdr...)
		if r.Status != http.StatusForbidden {
			t.Errorf("%s %s with Host %s: HTTP %d %q; want 403", tc.method, tc.path, evil, r.Status, tail(r.Body, 200))
		}
		if LoginCookie(r) != nil {
			t.Errorf("%s %s with Host %s set a login cookie", tc.method, tc.path, evil)
		}
	}
	if _, res, err := s.Dial(ctx(t), "/api/watch/"+id, DialOptions{Host: evil, Origin: "http://" + evil, Cookie: cookie}); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("WebSocket with Host %s: %v (%v); want 403", evil, err, res)
	}
	// Loopback names still work, at the listener's port.
	for _, h := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port} {
		if r := s.Do(http.MethodGet, "/api/sessions", nil, "Host", h, "Cookie", CookieHeader(cookie)); r.Status != http.StatusOK {
			t.Errorf("GET /api/sessions with Host %s: HTTP %d", h, r.Status)
		}
	}
}

// A binary WebSocket message where the page speaks JSON text (the hello,
// and every message after it) closes the socket with a reason. Before
// the fix a binary message was read as text.
func TestBinaryFrameRefused(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()

	// As the hello.
	conn, _, err := s.Dial(ctx(t), "/api/watch/"+id, DialOptions{Cookie: cookie})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx(t), websocket.MessageBinary, []byte(`{"t":"hello","since":0,"token":""}`)); err != nil {
		t.Fatal(err)
	}
	expectClose(t, conn, websocket.StatusUnsupportedData, "binary")

	// After the hello: an operator's input sent as binary.
	v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.C.Write(ctx(t), websocket.MessageBinary, []byte(`{"t":"take"}`)); err != nil {
		t.Fatal(err)
	}
	expectClose(t, v.C, websocket.StatusUnsupportedData, "binary")
	if r := c.Send(id, "echo still-$((3*3))"); !strings.Contains(r.Text, "still-9") {
		t.Fatalf("the agent's send after the refused frames: %q", r.Text)
	}
}

// expectClose reads conn until it ends, which must be a close from the
// server with code and a reason containing want.
func expectClose(t *testing.T, conn *websocket.Conn, code websocket.StatusCode, want string) {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx(t), closeBound)
	defer cancel()
	for {
		_, _, err := conn.Read(rctx)
		if err == nil {
			continue
		}
		got, reason := CloseOf(err)
		if got != code || !strings.Contains(reason, want) {
			t.Fatalf("socket ended with %v (close %d %q); want close %d saying %q", err, got, reason, code, want)
		}
		return
	}
}
