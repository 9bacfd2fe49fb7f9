package mcpserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// The console's badges read right, from real programs, in its JSON and on
// its page: the shell at its prompt with the last exit code, python3's
// REPL waiting for input, top interactive (not stuck) with its output's
// age, read -s at a secret prompt, a sleep running, the shell exited. The
// owner column names the client: its clientInfo name and connection
// number.
func TestConsoleBadgesInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t)
	base, token, _ := strings.Cut(consoleURL, "/#token=")
	id := c.open(nil)
	b.Open(consoleURL)

	type row struct {
		ID, Owner, Badge, Reader string
		ExitCode                 *int
		IdleMs                   *int64
	}
	api := func() (row, bool) {
		req, _ := http.NewRequest("GET", base+"/api/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var list []row
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
			t.Fatalf("/api/sessions: %v", err)
		}
		for _, r := range list {
			if r.ID == id {
				return r, true
			}
		}
		return row{}, false
	}
	sel := `document.querySelector('[data-id="` + id + `"]')` // an id is [a-z0-9-]
	expect := func(badge, reader string, code *int, text string) {
		t.Helper()
		var last row
		testkit.WaitFor(t, 30*time.Second, "badge "+badge+" in /api/sessions", func() bool {
			r, ok := api()
			last = r
			return ok && r.Badge == badge && r.Reader == reader &&
				(code == nil || r.ExitCode != nil && *r.ExitCode == *code)
		})
		if last.Owner != "console #1" {
			t.Errorf("owner %q, want the client's name and connection number, console #1", last.Owner)
		}
		b.WaitJS(sel+` && `+sel+`.querySelector(".badge").textContent.startsWith(`+strconv.Quote(text)+`)`, 20*time.Second)
		var shown string
		b.Eval(sel+`.textContent`, &shown)
		if !strings.Contains(shown, "console #1") {
			t.Errorf("the console's row %q does not name the owner console #1", shown)
		}
	}
	code := func(n int) *int { return &n }

	if r := c.send(id, "(exit 3)"); r.S["exitCode"] != 3.0 {
		t.Fatalf("(exit 3): %s", r.Text)
	}
	expect("prompt", "bash", code(3), "at prompt (last exit 3)")

	c.send(id, "python3 -q")
	expect("waiting", "python3", nil, "waiting for input: python3")
	c.send(id, "exit()")
	expect("prompt", "bash", code(0), "at prompt (last exit 0)")

	// top reads keys while it redraws every second: interactive, with the
	// age of its output, never "waiting for input".
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "top -d 1", "timeoutMs": 3000})
	expect("interactive", "top", nil, "interactive: top, output ")
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "q", "submit": false})
	expect("prompt", "bash", code(0), "at prompt")

	c.send(id, "read -s x")
	expect("secret", "bash", nil, "secret prompt: bash")
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "not-a-secret"})
	expect("prompt", "bash", code(0), "at prompt")

	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "sleep 60", "timeoutMs": 500})
	expect("running", "", nil, "running")
	c.ok(tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGINT"})
	expect("prompt", "bash", code(130), "at prompt (last exit 130)")

	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "exit 4"})
	expect("exited", "", code(4), "exited (4)")
}

// forged sends every request with a principal header of its own, which
// the guard must drop.
type forged struct{ base http.RoundTripper }

func (f forged) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(principalHeader, "admin")
	return f.base.RoundTrip(r)
}

// Over HTTP an owner is named by the client, its connection's number and
// the principal the guard authenticated (the token's holder, at the
// connection's address); a principal the client claims is ignored.
func TestHTTPOwnerNames(t *testing.T) {
	s := httpServer(t)
	name := func(c *client, id string) string {
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/api/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var list []struct{ ID, Owner string }
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			if e.ID == id {
				return e.Owner
			}
		}
		t.Fatalf("session %s not listed: %v", id, list)
		return ""
	}
	a := httpClient(t, s)
	if got, want := name(a, a.open(nil)), "http #1 (token@127.0.0.1)"; got != want {
		t.Errorf("the first HTTP client's owner is %q, want %q", got, want)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "forger\x1b[31m", Version: "0"}, nil).Connect(testkit.Ctx(t),
		&mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1, HTTPClient: &http.Client{Transport: forged{bearer{s.token, s.tr}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	b := &client{t: t, cs: cs}
	if got, want := name(b, b.open(nil)), "forger[31m #2 (token@127.0.0.1)"; got != want {
		t.Errorf("a client claiming a principal: owner %q, want %q (the guard's principal, controls dropped)", got, want)
	}
}
