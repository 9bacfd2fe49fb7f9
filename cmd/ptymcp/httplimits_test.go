package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
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

// Connections beyond -http-max-conns are closed when accepted, even the
// token holder's; once one of the others ends, the token holder gets in.
func TestHTTPConnectionCap(t *testing.T) {
	const max = 3
	s := httpServer(t, "-http-max-conns", fmt.Sprint(max))
	idle := make([]net.Conn, max)
	for i := range idle {
		idle[i] = s.dialRaw(t) // silent: held until the header timeout
	}
	authed := s.rawRequest(len(initBody), initBody, "Authorization", "Bearer "+s.token)
	over := s.dialRaw(t)
	_, _ = io.WriteString(over, authed) // may fail: the server may have closed it already
	_ = over.SetReadDeadline(time.Now().Add(httpHeaderTimeout / 2))
	if resp, err := http.ReadResponse(bufio.NewReader(over), nil); err == nil {
		t.Fatalf("a connection beyond the cap was served: HTTP %d", resp.StatusCode)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection beyond the cap was left open")
	}
	testkit.WaitFor(t, 10*time.Second, "the cap logged", func() bool {
		return strings.Contains(s.stderr.String(), "HTTP connection cap reached")
	})
	// One idle connection ends: its slot is free for the token holder
	// (before the header timeout would have freed it).
	_ = idle[0].Close()
	start := time.Now()
	testkit.WaitFor(t, httpHeaderTimeout/2, "the token holder served", func() bool {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		if _, err := io.WriteString(c, authed); err != nil {
			return false
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != ""
	})
	t.Logf("the token holder got in %v after a slot freed", time.Since(start).Round(time.Millisecond))
}

func TestHTTPMaxConnsFlag(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		if out := runFails(t, t.TempDir(), "-http", "127.0.0.1:0", "-http-max-conns", n); !strings.Contains(out, "ptymcp: -http-max-conns "+n+": at least 1") {
			t.Fatalf("-http-max-conns %s: %s", n, out)
		}
	}
	c, err := parseFlags([]string{"-http", "127.0.0.1:0"}, io.Discard)
	if err != nil || c.maxConns != defaultMaxConns {
		t.Fatalf("default: %d %v", c.maxConns, err)
	}
}
