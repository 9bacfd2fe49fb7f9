package mcpserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
)

// dialRaw opens a plain TCP connection to the server, closed at cleanup.
func (s *httpSrv) dialRaw(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rawRequest is an HTTP/1.1 request to the endpoint, keep-alive, with a
// body of declared length n (of which body is the start) and hdr.
func (s *httpSrv) rawRequest(n int, body string, hdr ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", s.addr, n)
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	return b.String() + "\r\n" + body
}

// closedByServer asserts the server closes c within d: a read ends in
// EOF or a reset, not in the test's own deadline.
func closedByServer(t *testing.T, what string, c net.Conn, r io.Reader, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	start := time.Now()
	n, err := io.Copy(io.Discard, r)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the connection is still open after %v", what, d)
	}
	t.Logf("%s: closed by the server after %v (%d more bytes, %v)", what, time.Since(start).Round(time.Millisecond), n, err)
}

// A refused request (no token, a wrong one, a foreign Origin) is answered
// with Connection: close and the server closes the connection; before,
// it stayed open, idle, for ever.
func TestHTTPRefusedConnectionClosed(t *testing.T) {
	s := httpServer(t)
	for _, c := range []struct {
		what   string
		status int
		hdr    []string
	}{
		{"no token", http.StatusUnauthorized, nil},
		{"wrong token", http.StatusUnauthorized, []string{"Authorization", "Bearer " + strings.Repeat("x", 43)}},
		{"foreign origin", http.StatusForbidden, []string{"Origin", "https://evil.example", "Authorization", "Bearer " + s.token}},
	} {
		conn := s.dialRaw(t)
		if _, err := io.WriteString(conn, s.rawRequest(len(initBody), initBody, c.hdr...)); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || !resp.Close {
			t.Fatalf("%s: HTTP %d, Connection %q; want %d and close", c.what, resp.StatusCode, resp.Header.Get("Connection"), c.status)
		}
		closedByServer(t, c.what, conn, br, 15*time.Second)
	}
	// The token holder's connection is kept for the next request.
	r := s.post(t, initBody, "Authorization", "Bearer "+s.token)
	if r.status != http.StatusOK || r.header.Get("Connection") == "close" {
		t.Fatalf("with the token: HTTP %d, Connection %q", r.status, r.header.Get("Connection"))
	}
}

// A request without the token whose body trickles in is cut once
// refusedRequestBound has passed; before, the server read it for as long
// as it came.
func TestHTTPTrickledBodyCut(t *testing.T) {
	s := httpServer(t)
	conn := s.dialRaw(t)
	const declared = 100_000 // within the 256 KiB net/http reads after a handler
	if _, err := io.WriteString(conn, s.rawRequest(declared, `{"jsonrpc"`)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	// A byte every 100 ms: the whole body would take almost 3 hours.
	stop := make(chan struct{})
	trickled := make(chan int, 1)
	go func() {
		n := 0
		defer func() { trickled <- n }()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			n++
		}
	}()
	start := time.Now()
	closedByServer(t, "trickled body", conn, br, refusedRequestBound+15*time.Second)
	close(stop)
	n := <-trickled
	if took := time.Since(start); took > refusedRequestBound+10*time.Second {
		t.Fatalf("cut after %v, %d bytes trickled", took, n)
	}
	t.Logf("%d bytes trickled before the cut", n)
}

// At -http-max-conns a new connection closes the oldest idle one that has
// not shown the token: the token holder gets in at once (before, every
// connection beyond the cap was closed when accepted, the token holder's
// too, until one of the others ended). When every slot has shown the
// token, the new connection is the one closed.
func TestHTTPConnectionCap(t *testing.T) {
	const max = 3
	s := httpServer(t, "-http-max-conns", fmt.Sprint(max))
	idle := make([]net.Conn, max)
	for i := range idle {
		idle[i] = s.dialRaw(t) // silent: held until the header timeout
	}
	authed := s.rawRequest(len(initBody), initBody, "Authorization", "Bearer "+s.token)
	held := make([]net.Conn, max)
	for i := range held {
		c := s.dialRaw(t)
		if _, err := io.WriteString(c, authed); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("the token holder's connection %d at the cap: %v %v", i, resp, err)
		}
		_ = resp.Body.Close()
		held[i] = c
		// The oldest idle connection made room.
		closedByServer(t, fmt.Sprintf("idle connection %d", i), idle[i], idle[i], 15*time.Second)
	}
	over := s.dialRaw(t)
	_, _ = io.WriteString(over, authed) // may fail: the server may have closed it already
	closedByServer(t, "a connection when every slot showed the token", over, over, 15*time.Second)
	testkit.WaitFor(t, 10*time.Second, "the cap logged", func() bool {
		return strings.Contains(s.stderr.String(), "HTTP connection cap reached")
	})
}

// fakeConn is a connection's address, for admit.
type fakeConn struct {
	net.Conn
	remote net.Addr
}

func (c fakeConn) RemoteAddr() net.Addr { return c.remote }

// admit picks its victims: of one source beyond -http-max-conns-per-source
// its own oldest; at -http-max-conns an idle one before one serving a
// request, the oldest first, never one that showed the token; none left,
// the new one is refused.
func TestConnLimitVictims(t *testing.T) {
	l := newConnLimit(nil, 3, 2, zerolog.Nop())
	conn := func(ip string) *limitedConn {
		return &limitedConn{l: l, source: sourceOf(&net.TCPAddr{IP: net.ParseIP(ip), Port: 1})}
	}
	admit := func(c *limitedConn, want ...*limitedConn) {
		t.Helper()
		victims, _, ok := l.admit(c)
		if !ok || !slices.Equal(victims, want) {
			t.Fatalf("admit %s: victims %v ok %v, want %v", c.source, victims, ok, want)
		}
	}
	a1, a2, a3 := conn("127.0.0.2"), conn("127.0.0.2"), conn("127.0.0.2")
	admit(a1)
	admit(a2)
	admit(a3, a1) // a source's third: its oldest goes
	b1, b2 := conn("127.0.0.3"), conn("127.0.0.3")
	admit(b1)
	a2.busy = 1   // serving a request
	admit(b2, a3) // the cap: the oldest idle, not the busy a2
	b1.authed, b2.authed = true, true
	c1 := conn("127.0.0.4")
	admit(c1, a2) // only a2 has not shown the token, busy: it goes
	d1 := conn("127.0.0.5")
	admit(d1, c1)
	d1.authed = true
	if victims, _, ok := l.admit(conn("127.0.0.6")); ok || len(victims) != 0 {
		t.Fatalf("every slot showed the token: victims %v ok %v, want the new one refused", victims, ok)
	}
	// Per source, only idle connections count and go: a person's live
	// views (served for as long as they are open) do not close each other.
	l = newConnLimit(nil, 10, 1, zerolog.Nop())
	x1, x2, x3 := conn("127.0.0.7"), conn("127.0.0.7"), conn("127.0.0.7")
	admit(x1)
	x1.busy = 1
	admit(x2)
	admit(x3, x2)
	// IPv6 sources count by their /64.
	if x, y := sourceOf(&net.TCPAddr{IP: net.ParseIP("2001:db8::1")}), sourceOf(&net.TCPAddr{IP: net.ParseIP("2001:db8::ffff:2")}); x != y {
		t.Fatalf("one /64, two sources: %s %s", x, y)
	}
}

// The cap's line: the first at once, then at most one per capLogEvery,
// each counting the events it did not log.
func TestConnLimitLogRateLimited(t *testing.T) {
	var buf syncBuf
	l := newConnLimit(nil, 1, 100, zerolog.New(&buf))
	now := time.Unix(1e9, 0)
	l.now = func() time.Time { return now }
	event := func() {
		if _, line, _ := l.admit(&limitedConn{l: l, source: "127.0.0.2"}); line != nil {
			line()
		}
	}
	event() // fills the cap: no event
	for range 50 {
		event()
	}
	if n := strings.Count(buf.String(), "HTTP connection cap reached"); n != 1 {
		t.Fatalf("%d lines after 50 events in an instant, want 1:\n%s", n, buf.String())
	}
	now = now.Add(capLogEvery - time.Millisecond)
	event()
	now = now.Add(time.Millisecond)
	event()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"suppressed":50`) || !strings.Contains(lines[0], `"suppressed":0`) {
		t.Fatalf("after %v: %q, want a second line counting the 50 events not logged", capLogEvery, lines)
	}
}

func TestHTTPMaxConnsFlag(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		if out := runFails(t, t.TempDir(), "-http", "127.0.0.1:0", "-http-max-conns", n); !strings.Contains(out, "ptymcp: -http-max-conns "+n+": at least 1") {
			t.Fatalf("-http-max-conns %s: %s", n, out)
		}
	}
	for _, n := range []string{"0", "-1"} {
		if out := runFails(t, t.TempDir(), "-http", "127.0.0.1:0", "-http-max-conns-per-source", n); !strings.Contains(out, "ptymcp: -http-max-conns-per-source "+n+": at least 1") {
			t.Fatalf("-http-max-conns-per-source %s: %s", n, out)
		}
	}
}
