package mcpserver

// End to end over -http: the binary serving streamable HTTP
// (helpers_http_test.go), its SDK clients as owners.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// Two HTTP clients are two owners: neither can see, send to, read,
// signal or close the other's sessions (answered like unknown ids). When
// an HTTP session ends, its processes are gone.
func TestHTTPIsolation(t *testing.T) {
	srv := httpServer(t)
	a, b := httpClient(t, srv), httpClient(t, srv)
	ida, idb := a.open(nil), b.open(nil)
	task := a.ok(tools.TerminalSend, obj{"sessionId": ida, "text": "sleep 1000", "runInBackground": true}).str("taskId")
	for _, pair := range []struct {
		c  *client
		id string
	}{{b, ida}, {a, idb}} {
		want := "unknown PTY session " + pair.id
		pair.c.fails(tools.TerminalSend, obj{"sessionId": pair.id, "text": "echo x"}, want)
		pair.c.fails(tools.TerminalRead, obj{"sessionId": pair.id}, want)
		pair.c.fails(tools.TerminalSignal, obj{"sessionId": pair.id, "signal": "SIGTERM"}, want)
		pair.c.fails(tools.TerminalClose, obj{"sessionId": pair.id}, want)
		if r := pair.c.ok(tools.TerminalList, nil); strings.Contains(r.Text, pair.id) {
			t.Fatalf("the other's session is listed: %q", r.Text)
		}
	}
	b.fails(tools.TaskOutput, obj{"taskId": task}, "unknown task "+task)
	b.fails(tools.TaskKill, obj{"taskId": task}, "unknown task "+task)
	if r := b.send(idb, "echo b-ok"); !strings.Contains(r.Text, "b-ok\n") {
		t.Fatalf("b's own session: %q", r.Text)
	}
	waitForeground(t, a, ida, "sleep")
	members := sessionMembers(sessionPID(t, a, ida))
	if err := a.cs.Close(); err != nil { // DELETE: the HTTP session ends
		t.Logf("close a: %v", err)
	}
	testkit.WaitFor(t, 15*time.Second, "a's processes gone", func() bool {
		for _, p := range members {
			if alive(p) {
				return false
			}
		}
		return true
	})
	if r := b.send(idb, "echo b-still"); !strings.Contains(r.Text, "b-still\n") {
		t.Fatalf("b after a left: %q", r.Text)
	}
	// A request body over the HTTP limit (4 MiB), with the right token, is
	// refused; the session keeps serving. (Sent raw: the SDK client closes
	// itself on a 413.)
	body, _ := json.Marshal(obj{"jsonrpc": "2.0", "id": 99, "method": "tools/call",
		"params": obj{"name": tools.TerminalSend, "arguments": obj{"sessionId": idb, "text": strings.Repeat("x", 5<<20)}}})
	req, _ := http.NewRequest(http.MethodPost, srv.url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", b.cs.ID())
	resp, err := (&http.Client{Transport: srv.tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 5 MiB request: HTTP %d", resp.StatusCode)
	}
	if r := b.send(idb, "echo b-after-huge"); !strings.Contains(r.Text, "b-after-huge\n") {
		t.Fatalf("b after a huge request: %q", r.Text)
	}
}

// A client that vanishes without ending its HTTP session (no DELETE, its
// connections dropped) loses its terminals when the session times out.
func TestHTTPAbandonedSessionTimesOut(t *testing.T) {
	srv := httpServer(t, "-http-session-timeout", "500ms")
	tr := &http.Transport{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gone", Version: "0"}, nil).Connect(testkit.Ctx(t),
		&mcp.StreamableClientTransport{Endpoint: srv.url, MaxRetries: -1, DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: bearer{srv.token, tr}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cs: cs}
	// The session times out 500 ms after its last request, so no step
	// before the client vanishes waits on the machine between requests
	// (as a background send, then a wait for its command to run, would):
	// this send returns once the job it leaves running exists.
	open := c.ok(tools.TerminalOpen, nil)
	r := c.send(open.str("sessionId"), "sleep 1000 &")
	running, _ := r.S["running"].([]any)
	if len(running) != 1 {
		t.Fatalf("the job left running: %q", r.Text)
	}
	members := []int{int(open.num("pid")), int(running[0].(map[string]any)["pid"].(float64))}
	for _, p := range members {
		if !alive(p) {
			t.Fatalf("process %d of %v (the shell, the job) is not running", p, members)
		}
	}
	tr.CloseIdleConnections() // the client is gone: no more requests, no DELETE
	testkit.WaitFor(t, 15*time.Second, "the abandoned session's processes gone", func() bool {
		for _, p := range members {
			if alive(p) {
				return false
			}
		}
		return true
	})
	_ = cs.Close() // the session is already gone on the server
}
