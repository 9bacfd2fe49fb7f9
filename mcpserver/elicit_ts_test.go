package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
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

// tsClient finds node and test/mcpclient-ts/elicit.mjs (skipped without
// them outside CI: testkit.NodeScript).
func tsClient(t *testing.T) (node, script string) {
	t.Helper()
	return testkit.NodeScript(t, "mcpclient-ts", "@modelcontextprotocol/sdk", "elicit.mjs")
}

// tsRig is the TypeScript SDK as a real client on 2025-11-25 (elicit.mjs
// under node) over ptymcp's stdio transport, to an in-process server with
// the console's secret page: the client declares URL-mode elicitation,
// opens a terminal and sends secretCmd, which stops at a secret prompt.
type tsRig struct {
	t       *testing.T
	ctx     context.Context
	page    *secretPage
	ss      *mcp.ServerSession
	lines   chan tsReport // the client's reports
	control *os.File      // the client's answers to elicitations, a line each
	exited  chan error    // the client's exit, once
	// accepted is closed once the server's transport has read the
	// client's "accept" answer to an elicitation.
	accepted chan struct{}
}

// startTS starts the client; the test's cleanup reaps it (a failed test
// kills it).
func startTS(t *testing.T) *tsRig {
	t.Helper()
	node, script := tsClient(t)
	p, f := newElicitInproc(t)
	r := &tsRig{t: t, ctx: testkit.Ctx(t), page: f, lines: make(chan tsReport, 16), exited: make(chan error, 1), accepted: make(chan struct{})}

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
	r.control = control
	cmd := exec.Command(node, script, secretCmd)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nodeIn, nodeOut, os.Stderr
	cmd.ExtraFiles = []*os.File{nodeReports, nodeControl} // fds 3 and 4
	cmd.Dir = filepath.Dir(script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// The client ends by itself; a failed test kills it. Either way it
		// is reaped before the test ends.
		select {
		case err := <-r.exited:
			r.exited <- err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-r.exited
		}
		_ = toNode.Close()
		_ = control.Close()
	})
	for _, f := range []*os.File{nodeOut, nodeIn, nodeReports, nodeControl} {
		_ = f.Close() // the child's ends
	}

	// The client's messages reach the server through a pipe whose Write
	// returns once the server's transport read them: after the write of
	// the line answering an elicitation with "accept", the server has it.
	toServer, fromClient := io.Pipe()
	go func() {
		defer fromNode.Close()
		br := bufio.NewReader(fromNode)
		var seen bool
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if _, werr := fromClient.Write(line); werr != nil {
					return // the connection closed
				}
				var msg struct {
					Result *struct {
						Action string `json:"action"`
					} `json:"result"`
				}
				if !seen && json.Unmarshal(line, &msg) == nil && msg.Result != nil && msg.Result.Action == "accept" {
					seen = true
					close(r.accepted)
				}
			}
			if err != nil {
				_ = fromClient.CloseWithError(err)
				return
			}
		}
	}()
	ss, err := p.srv.mcp.Connect(r.ctx, &stdioTransport{in: toServer, out: toNode, log: zerolog.Nop()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.ss = ss

	// Buffered past what the client reports, so the reader never blocks
	// on a test that stopped reading (it failed).
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(reports)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var rep tsReport
			if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
				t.Errorf("report %q: %v", sc.Text(), err)
				continue
			}
			if rep.Result != nil {
				rep.decoded = new(mcp.CallToolResult)
				if err := json.Unmarshal(rep.Result, rep.decoded); err != nil {
					t.Errorf("result %s: %v", rep.Result, err)
				}
			}
			r.lines <- rep
		}
	}()
	return r
}

// next is the client's next report, which must be want.
func (r *tsRig) next(want string) tsReport {
	r.t.Helper()
	select {
	case rep, ok := <-r.lines:
		switch {
		case !ok:
			r.t.Fatalf("the client ended before %q", want)
		case rep.Event == "error":
			r.t.Fatalf("the client failed: %s", rep.Message)
		case rep.Event != want:
			r.t.Fatalf("client reported %+v, want %q", rep, want)
		}
		return rep
	case <-r.ctx.Done():
		r.t.Fatalf("no %q from the client", want)
	}
	panic("unreachable")
}

// elicitation is the URL-mode elicitation the client was asked, after
// an initialize on 2025-11-25 that declared it.
func (r *tsRig) elicitation() *mcp.ElicitParams {
	r.t.Helper()
	el := r.next("elicit").Params
	if el == nil || el.Mode != "url" || el.ElicitationID == "" || !strings.Contains(el.URL, "#token=") || !strings.Contains(el.Message, `"pw:"`) {
		r.t.Fatalf("elicitation %+v", el)
	}
	if ip := r.ss.InitializeParams(); ip.ProtocolVersion != "2025-11-25" || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil {
		r.t.Fatalf("the client's initialize: %+v", ip)
	}
	return el
}

// accept has the client answer the elicitation with "accept".
func (r *tsRig) accept() {
	r.t.Helper()
	if _, err := r.control.WriteString("accept\n"); err != nil {
		r.t.Fatal(err)
	}
}

// secretWentIn asserts the rest of the client's run after the person
// typed the secret and the client accepted: it hears the elicitation
// complete, its send's result says the secret went in and shows what the
// program did with it (its length), and holds neither the secret nor the
// link; the client ends cleanly.
func (r *tsRig) secretWentIn(el *mcp.ElicitParams) {
	r.t.Helper()
	if got := r.next("complete").ElicitationID; got != el.ElicitationID {
		r.t.Fatalf("completed %q, want %q", got, el.ElicitationID)
	}
	rep := r.next("result")
	res := rep.decoded
	if res == nil || res.IsError || len(res.Content) != 1 {
		r.t.Fatalf("result %s", rep.Result)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	sc, _ := res.StructuredContent.(map[string]any)
	if !hasLine(text, secretLen) || !strings.Contains(text, "[secret entered: ") || !strings.Contains(text, "A person entered the secret at the prompt.") ||
		sc["secretEntered"] != true || sc["secret"] == true || sc["secretUrl"] != nil || sc["sessionId"] != rep.SessionID {
		r.t.Fatalf("result %s", rep.Result)
	}
	if strings.Contains(string(rep.Result), testSecret) || strings.Contains(string(rep.Result), "#token=") {
		r.t.Fatalf("the secret or the link is in the result: %s", rep.Result)
	}
	select {
	case err := <-r.exited:
		r.exited <- err
		if err != nil {
			r.t.Fatalf("the client: %v", err)
		}
	case <-r.ctx.Done():
		r.t.Fatal("the client did not end")
	}
}

// The TypeScript SDK as a real client, answering as clients do: its user
// agreed to open the link, so it accepts at once, and the server waits
// for the person; only once the server read the accept is the secret
// typed, through the page's HTTP API (as the page posts it). The link
// then is spent.
func TestElicitTypeScript(t *testing.T) {
	r := startTS(t)
	el := r.elicitation()
	r.accept()
	select {
	case <-r.accepted:
	case <-r.ctx.Done():
		t.Fatal("the server did not get the client's accept")
	}
	if err := r.page.enter(r.ctx, el.URL, testSecret); err != nil {
		t.Fatal(err)
	}
	r.secretWentIn(el)
	if err := r.page.enter(r.ctx, el.URL, "again"); err == nil || !strings.Contains(err.Error(), "410") {
		t.Fatalf("the spent link: %v", err)
	}
}

// The link the TypeScript client was asked to open, opened in a real
// headless chromium that never logged in to the console (the token alone
// admits): the person types the secret into the page's password field and
// submits it, and only then does the client answer "accept"; the send's
// result shows the program got the secret, and holds it nowhere. The
// link then is spent, and the page kept to its content security policy.
func TestElicitTypeScriptBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	r := startTS(t)
	el := r.elicitation()
	enterSecret(t, b, el.URL, "pw:", testSecret, "")
	r.accept()
	r.secretWentIn(el)
	b.Open("about:blank")
	b.Open(el.URL)
	b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "secret_link_used"`, 15*time.Second)
	withinPolicy(t, b)
}
