package adversarial

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// defaultConnsPerSource is -http-max-conns-per-source's default
// (docs/mcp.md, "Connections").
const defaultConnsPerSource = 32

// capLine is the start of the log line of the connection caps, and
// capLogEvery the most often it is logged after the first (docs/mcp.md).
const (
	capLine     = "HTTP connection cap reached"
	capLogEvery = 10 * time.Second
)

// dialFrom opens a TCP connection to addr from the loopback address src
// ("" the system's choice, 127.0.0.1), closed at the test's end. Every
// address of 127.0.0.0/8 is this machine's: each is a source of its own
// to the server.
func dialFrom(t testing.TB, addr, src string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 20 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %q: %v", src, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// request sends a request without the token on c and returns its status,
// or the error that ended the connection first (closed by the server).
func request(s *Server, c net.Conn) (int, error) {
	if _, err := fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr); err != nil {
		return 0, err
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// accepted returns once the server has accepted every connection dialled
// before: it accepts in order, so a later connection's answer (or its
// close) comes after every earlier one was taken from the queue.
func accepted(t testing.TB, s *Server, src string) {
	t.Helper()
	_, err := request(s, dialFrom(t, s.Addr, src))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server did not take a connection within 30 s")
	}
}

// capLines counts the cap's log lines so far.
func capLines(s *Server) int { return strings.Count(s.Stderr(), capLine) }

// 300 connections that send nothing do not lock the token holder out:
// from the token holder's own source (on loopback every client is
// 127.0.0.1; the per-source bound is reached), and from 30 sources of 10
// (the total cap is reached). Before, they filled -http-max-conns (256)
// and every connection beyond was closed when accepted, the token
// holder's too: each MCP call failed at once (connection reset) until the
// idle ones went, and an attacker who reopened them every 8 s (under the
// 10 s header timeout) held the server for ever.
func TestHTTPIdleConnectionsDoNotLockOutTheTokenHolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls     bool // the token holder's slot found under TLS too
		sources func(i int) string
	}{
		{"one source", false, func(int) string { return "" }},
		{"one source, TLS", true, func(int) string { return "" }},
		{"30 sources", false, func(i int) string { return fmt.Sprintf("127.0.3.%d", 1+i%30) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, Options{TLS: tc.tls})
			start := time.Now()
			flood := func() {
				for i := range 300 {
					dialFrom(t, s.Addr, tc.sources(i))
				}
				accepted(t, s, "")
			}
			flood()
			c := s.MCP() // a new client: its connections come after the idle ones
			id := c.Open()
			for i := range 4 {
				if r := c.Send(id, fmt.Sprintf("echo holder-%d-$((6*7))", i)); !strings.Contains(r.Text, fmt.Sprintf("holder-%d-42", i)) {
					t.Fatalf("call %d: %q", i, r.Text)
				}
			}
			// More idle connections while the token holder's are open:
			// theirs, having shown the token, are never the ones closed.
			flood()
			if r := c.Send(id, "echo still-$((6*7))"); !strings.Contains(r.Text, "still-42") {
				t.Fatalf("after the second wave: %q", r.Text)
			}
			if n, most := capLines(s), 2+int(time.Since(start)/capLogEvery); n < 1 || n > most {
				t.Fatalf("%d lines %q (want 1 to %d)", n, capLine, most)
			}
		})
	}
}

// One source holds at most -http-max-conns-per-source connections
// without the token: 300 idle ones from 127.0.0.2 leave the server with
// no more than that many of them, and a bystander's idle connection from
// 127.0.0.3, opened before, is still served. Before, the server held 256
// of them (all it had).
func TestHTTPIdleConnectionsBoundedPerSource(t *testing.T) {
	s := Start(t, Options{})
	bystander := dialFrom(t, s.Addr, "127.0.0.3")
	accepted(t, s, "127.0.0.4")
	base := s.Proc().FDs
	for range 300 { // that send nothing, as an attacker holding slots
		dialFrom(t, s.Addr, "127.0.0.2")
	}
	accepted(t, s, "127.0.0.4")
	held := s.Proc().FDs - base
	t.Logf("the server holds %d more descriptors after 300 idle connections from one source", held)
	if held > defaultConnsPerSource+2 {
		t.Fatalf("the server holds %d more descriptors after 300 idle connections from one source (at most %d per source)", held, defaultConnsPerSource)
	}
	if status, err := request(s, bystander); err != nil || status != http.StatusUnauthorized {
		t.Fatalf("the bystander's connection: HTTP %d, %v", status, err)
	}
}

// The cap's line is rate-limited: logged at once, then at most once per
// capLogEvery, with the count of the events it did not log. Before, it
// was logged once per "episode", and under churn (connections ending and
// new ones arriving while the cap is reached) a line per connection:
// 1,176 lines, up to 159 a second. The churn here goes on until the
// second line, a capLogEvery later.
func TestHTTPConnCapLogRateLimited(t *testing.T) {
	const max = 8
	s := Start(t, Options{Args: []string{"-http-max-conns", fmt.Sprint(max)}})
	start := time.Now()
	var ring []net.Conn
	pace := time.NewTicker(5 * time.Millisecond) // load, not a wait: ~200 connections a second
	defer pace.Stop()
	dialled := 0
	for capLines(s) < 2 {
		if time.Since(start) > capLogEvery+time.Minute {
			t.Fatalf("no second line after %v of churn (%d connections)", time.Since(start), dialled)
		}
		// From many sources, so that the per-source bound is not the
		// one reached.
		c := dialFrom(t, s.Addr, fmt.Sprintf("127.0.1.%d", 1+dialled%200))
		dialled++
		ring = append(ring, c)
		if len(ring) > 2*max {
			_ = ring[0].Close()
			ring = ring[1:]
		}
		<-pace.C
	}
	accepted(t, s, "127.0.2.1")
	elapsed := time.Since(start)
	var lines []map[string]any
	for _, l := range strings.Split(s.Stderr(), "\n") {
		var m map[string]any
		if strings.Contains(l, capLine) && json.Unmarshal([]byte(l), &m) == nil {
			lines = append(lines, m)
		}
	}
	t.Logf("%d cap lines in %v of churn, %d connections: %v", len(lines), elapsed.Round(time.Millisecond), dialled, lines)
	if most := 2 + int(elapsed/capLogEvery); len(lines) < 2 || len(lines) > most {
		t.Fatalf("%d lines %q in %v (want 2 to %d)", len(lines), capLine, elapsed, most)
	}
	if n, _ := lines[1]["suppressed"].(float64); n < 1 {
		t.Fatalf("the second line counts no suppressed events: %v", lines[1])
	}
}
