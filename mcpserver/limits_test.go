package mcpserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// A terminal_open beyond -max-terminals is refused with a text that says
// which limit and what to do; a closed terminal frees its slot.
func TestMaxTerminals(t *testing.T) {
	c, _, _ := stdioServer(t, "-max-terminals", "2")
	first := c.open(nil)
	c.open(nil)
	c.fails(tools.TerminalOpen, nil, "terminal limit reached: this MCP session already has 2 terminals (ptymcp -max-terminals 2)")
	if r := c.ok(tools.TerminalClose, obj{"sessionId": first}); r.str("outcome") != "closed" {
		t.Fatalf("close: %q", r.Text)
	}
	c.open(nil)
	c.fails(tools.TerminalOpen, nil, "-max-terminals 2")
}

// The refusal is a terminalLimitError wrapping messages.ErrSessionLimit,
// per owner: another MCP session has its own terminals.
func TestMaxTerminalsTyped(t *testing.T) {
	p := newInproc(t, tools.Options{})
	p.srv.maxTerminals = 1
	c := p.client()
	c.open(nil)
	p.srv.mu.Lock()
	var owner messages.Owner
	for _, o := range p.srv.owners {
		owner = o
	}
	p.srv.mu.Unlock()
	_, err := p.srv.reserveTerminal(testkit.Ctx(t), owner)
	var le *terminalLimitError
	if !errors.Is(err, messages.ErrSessionLimit) || !errors.As(err, &le) || le.Max != 1 {
		t.Fatalf("open beyond the cap: %v, want a terminalLimitError wrapping ErrSessionLimit", err)
	}
	c.fails(tools.TerminalOpen, nil, "terminal limit reached")
	p.client().open(nil) // another owner
}

// An initialize beyond -http-max-sessions is refused with HTTP 503 and a
// JSON-RPC error that names the limit; a deleted session frees its slot.
func TestHTTPMaxSessions(t *testing.T) {
	s := httpServer(t, "-http-max-sessions", "2")
	auth := []string{"Authorization", "Bearer " + s.token}
	first := s.session(t)
	s.session(t)
	r := s.post(t, initBody, auth...)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Mcp-Session-Id") != "" ||
		!strings.Contains(r.body, `"error"`) || !strings.Contains(r.body, "MCP session limit reached: 2 sessions over HTTP are open (-http-max-sessions 2)") {
		t.Fatalf("third initialize: HTTP %d, session %q: %s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
	}
	testkit.WaitFor(t, 10*time.Second, "the refusal logged", func() bool {
		return strings.Contains(s.stderr.String(), "MCP session refused")
	})
	// Calls in the existing sessions go on.
	if r := s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, append(auth, "Mcp-Session-Id", first, "Mcp-Protocol-Version", "2025-06-18")...); r.status != http.StatusOK {
		t.Fatalf("tools/list in a session: HTTP %d: %s", r.status, r.body)
	}
	if r := s.raw(t, http.MethodDelete, "", append(auth, "Mcp-Session-Id", first, "Mcp-Protocol-Version", "2025-06-18")...); r.status/100 != 2 {
		t.Fatalf("DELETE: HTTP %d: %s", r.status, r.body)
	}
	var sid string
	testkit.WaitFor(t, 10*time.Second, "a new session after a delete", func() bool {
		r := s.post(t, initBody, auth...)
		sid = r.header.Get("Mcp-Session-Id")
		return r.status == http.StatusOK && sid != ""
	})
	if r := s.post(t, initBody, auth...); r.status != http.StatusServiceUnavailable {
		t.Fatalf("initialize at the cap again: HTTP %d: %s", r.status, r.body)
	}
}

// A request that carries a session id is never counted as a new session.
func TestSessionCapPassesSessions(t *testing.T) {
	served := 0
	h := &sessionCap{next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }), max: 1, live: func() int { return 1 }, log: zerolog.Nop()}
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPost} {
		req, _ := http.NewRequest(m, "http://127.0.0.1/mcp", nil)
		req.Header.Set("Mcp-Session-Id", "x")
		h.ServeHTTP(discardWriter{http.Header{}}, req)
	}
	if served != 3 {
		t.Fatalf("served %d of 3 requests in sessions", served)
	}
}

type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header         { return w.h }
func (w discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w discardWriter) WriteHeader(int)             {}

func TestLimitFlags(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		if out := runFails(t, t.TempDir(), "-http", "127.0.0.1:0", "-http-max-sessions", n); !strings.Contains(out, "ptymcp: -http-max-sessions "+n+": at least 1") {
			t.Fatalf("-http-max-sessions %s: %s", n, out)
		}
		if out := runFails(t, t.TempDir(), "-max-terminals", n); !strings.Contains(out, "ptymcp: -max-terminals "+n+": at least 1") {
			t.Fatalf("-max-terminals %s: %s", n, out)
		}
	}
}
