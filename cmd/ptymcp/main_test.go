package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/fixture"
	"github.com/ptyactor/ptyactor/test/leakcheck"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// runVar marks every process this test binary starts, including the
// ptymcp servers it builds and runs and their shells: none may outlive
// the tests.
const runVar = "PTYMCP_TEST_RUN"

var checker *leakcheck.Checker

func TestMain(m *testing.M) {
	restore := fixture.PrivateState()
	code := leakcheck.Main(m, runVar, func(c *leakcheck.Checker) { checker = c })
	restore()
	cleanupBinary()
	fixture.RemoveBinaries()
	os.Exit(code)
}

// testConfig is testkit.PTYConfig: its silence tier (30 s) outlasts a
// python3 start on a loaded machine (5 s did not: test/stress.sh), and the
// foreground "sleep 100" sends here are still running when a test cancels
// them.
func testConfig() messages.Config { return testkit.PTYConfig() }

// inproc is a server in this process with one service, reached over the
// SDK's in-memory transport.
type inproc struct {
	t   testing.TB
	svc *actors.Service
	srv *server
}

func newInproc(t testing.TB, opts tools.Options) *inproc {
	t.Helper()
	return newInprocWith(t, opts, local.Options{})
}

// newInprocWith is newInproc over a local backend with lopts (a sandbox).
func newInprocWith(t testing.TB, opts tools.Options, lopts local.Options) *inproc {
	t.Helper()
	svc := fixture.Service(t, fixture.Options{Config: testConfig(), Backends: []backend.Backend{local.New(lopts)}})
	ts, err := tools.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(svc, ts, zerolog.Nop())
	t.Cleanup(s.close)
	return &inproc{t: t, svc: svc, srv: s}
}

// client connects a new MCP client (a new MCP session, so a new owner).
func (p *inproc) client() *client {
	p.t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := testkit.Ctx(p.t)
	if _, err := p.srv.mcp.Connect(ctx, st, nil); err != nil {
		p.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { _ = cs.Close() })
	return &client{t: p.t, cs: cs}
}

// client is one MCP client session.
type client struct {
	t  testing.TB
	cs *mcp.ClientSession
}

// result is a tool result decoded for assertions.
type result struct {
	Text    string
	IsError bool
	S       map[string]any // structuredContent
}

func (r result) str(k string) string {
	v, _ := r.S[k].(string)
	return v
}

func (r result) num(k string) float64 {
	v, _ := r.S[k].(float64)
	return v
}

// call runs a tool; args may be any JSON-marshalable value or a
// json.RawMessage (sent as is).
func (c *client) call(name string, args any) result {
	c.t.Helper()
	r, err := c.callErr(name, args)
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return r
}

func (c *client) callErr(name string, args any) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c.callCtx(ctx, name, args)
}

// callCtx is callErr bounded by ctx instead of a minute.
func (c *client) callCtx(ctx context.Context, name string, args any) (result, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return result{}, err
	}
	var r result
	r.IsError = res.IsError
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			r.Text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &r.S)
	}
	return r, nil
}

// ok asserts a successful call.
func (c *client) ok(name string, args any) result {
	c.t.Helper()
	r := c.call(name, args)
	if r.IsError {
		c.t.Fatalf("%s %v: %s", name, args, r.Text)
	}
	return r
}

// fails asserts an error result whose text contains want.
func (c *client) fails(name string, args any, want string) result {
	c.t.Helper()
	r := c.call(name, args)
	if !r.IsError || !strings.HasPrefix(r.Text, "Error: ") || !strings.Contains(r.Text, want) {
		c.t.Fatalf("%s %s: want an error containing %q, got isError=%v %q", name, argString(args), want, r.IsError, r.Text)
	}
	return r
}

func argString(a any) string {
	if raw, ok := a.(json.RawMessage); ok {
		return string(raw)
	}
	b, _ := json.Marshal(a)
	return string(b)
}

type obj = map[string]any

// open opens a terminal and returns its id.
func (c *client) open(args obj) string {
	c.t.Helper()
	r := c.ok(tools.TerminalOpen, args)
	id := r.str("sessionId")
	if !strings.HasPrefix(id, "pty-") {
		c.t.Fatalf("open: no session id in %v", r.S)
	}
	return id
}

func (c *client) send(id, text string) result {
	c.t.Helper()
	return c.ok(tools.TerminalSend, obj{"sessionId": id, "text": text})
}
