package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
)

// tsReport is one line test/mcpclient-ts/elicit.mjs writes on fd 3.
type tsReport struct {
	Event         string              `json:"event"`
	Params        *mcp.ElicitParams   `json:"params"`
	ElicitationID string              `json:"elicitationId"`
	SessionID     string              `json:"sessionId"`
	Result        json.RawMessage     `json:"result"`
	Message       string              `json:"message"`
	decoded       *mcp.CallToolResult // Result, decoded
}

// tsClient finds node and test/mcpclient-ts/elicit.mjs. It skips when node
// or the SDK's node_modules are missing, unless CI is set: test/deps.sh
// installs both, so there their absence is a failure.
func tsClient(t *testing.T) (node, script string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + " (source test/deps.sh installs it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "mcpclient-ts"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("@modelcontextprotocol/sdk is not installed in test/mcpclient-ts: %v", err)
	}
	return node, filepath.Join(dir, "elicit.mjs")
}

// The TypeScript SDK as a real client on 2025-11-25, over ptymcp's stdio
// transport: it declares URL-mode elicitation, its terminal_send stops at
// a secret prompt, it is asked to open a one-shot link; the test types the
// secret through the link (a person at the page), the client accepts,
// hears the elicitation complete, and its result says the secret went in,
// shows what the program did with it, and holds the secret nowhere.
func TestElicitTypeScript(t *testing.T) {
	node, script := tsClient(t)
	p, f := newElicitInproc(t)
	ctx := testkit.Ctx(t)

	pipe := func() (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}
	fromNode, nodeOut := pipe() // MCP: the client's stdout
	nodeIn, toNode := pipe()    // MCP: the client's stdin
	reports, nodeReports := pipe()
	nodeControl, control := pipe()
	cmd := exec.Command(node, script, secretCmd)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nodeIn, nodeOut, os.Stderr
	cmd.ExtraFiles = []*os.File{nodeReports, nodeControl} // fds 3 and 4
	cmd.Dir = filepath.Dir(script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// The client ends by itself; a failed test kills it. Either way it
		// is reaped before the test ends.
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = toNode.Close()
		_ = control.Close()
	})
	for _, f := range []*os.File{nodeOut, nodeIn, nodeReports, nodeControl} {
		_ = f.Close() // the child's ends
	}
	ss, err := p.srv.mcp.Connect(ctx, &stdioTransport{in: fromNode, out: toNode, log: zerolog.Nop()}, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Buffered past what the client reports, so the reader never blocks
	// on a test that stopped reading (it failed).
	lines := make(chan tsReport, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(reports)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var r tsReport
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("report %q: %v", sc.Text(), err)
				continue
			}
			if r.Result != nil {
				r.decoded = new(mcp.CallToolResult)
				if err := json.Unmarshal(r.Result, r.decoded); err != nil {
					t.Errorf("result %s: %v", r.Result, err)
				}
			}
			lines <- r
		}
	}()
	next := func(want string) tsReport {
		t.Helper()
		select {
		case r, ok := <-lines:
			switch {
			case !ok:
				t.Fatalf("the client ended before %q", want)
			case r.Event == "error":
				t.Fatalf("the client failed: %s", r.Message)
			case r.Event != want:
				t.Fatalf("client reported %+v, want %q", r, want)
			}
			return r
		case <-ctx.Done():
			t.Fatalf("no %q from the client", want)
		}
		panic("unreachable")
	}

	el := next("elicit").Params
	if el == nil || el.Mode != "url" || el.ElicitationID == "" || !strings.Contains(el.URL, "#token=") || !strings.Contains(el.Message, `"pw:"`) {
		t.Fatalf("elicitation %+v", el)
	}
	if ip := ss.InitializeParams(); ip.ProtocolVersion != "2025-11-25" || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil {
		t.Fatalf("the client's initialize: %+v", ip)
	}
	if err := f.enter(ctx, el.URL, testSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := control.WriteString("accept\n"); err != nil {
		t.Fatal(err)
	}
	if got := next("complete").ElicitationID; got != el.ElicitationID {
		t.Fatalf("completed %q, want %q", got, el.ElicitationID)
	}
	rep := next("result")
	res := rep.decoded
	if res == nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("result %s", rep.Result)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	sc, _ := res.StructuredContent.(map[string]any)
	if !hasLine(text, secretLen) || !strings.Contains(text, "[secret entered: ") || sc["secretEntered"] != true || sc["secret"] == true || sc["sessionId"] != rep.SessionID {
		t.Fatalf("result %s", rep.Result)
	}
	if strings.Contains(string(rep.Result), testSecret) || strings.Contains(string(rep.Result), "#token=") {
		t.Fatalf("the secret or the link is in the result: %s", rep.Result)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("the client: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the client did not end")
	}
}
