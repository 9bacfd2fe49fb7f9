package adversarial

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// The MCP client of the fixture's server, and its tool results.

// MCP is one MCP client of the server (a new MCP session, so a new
// owner) over streamable HTTP with the bearer token.
type MCP struct {
	t  testing.TB
	CS *mcp.ClientSession
}

// MCP connects a new client; it is closed at the test's end.
func (s *Server) MCP() *MCP {
	s.t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "adversarial", Version: "0"}, nil).Connect(testkit.Ctx(s.t),
		&mcp.StreamableClientTransport{Endpoint: s.URL("/mcp"), MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{s.Token, s.tr}}}, nil)
	if err != nil {
		s.t.Fatalf("MCP connect: %v", err)
	}
	s.t.Cleanup(func() { _ = cs.Close() })
	return &MCP{t: s.t, CS: cs}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Result is a tool result decoded for assertions.
type Result struct {
	Text    string
	IsError bool
	S       map[string]any // structuredContent
}

// Str is the structured result's string field k.
func (r Result) Str(k string) string { v, _ := r.S[k].(string); return v }

// CallErr runs a tool within a minute; a protocol error is returned.
func (c *MCP) CallErr(name string, args any) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CS.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return Result{}, err
	}
	r := Result{IsError: res.IsError}
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

// OK runs a tool that must succeed.
func (c *MCP) OK(name string, args any) Result {
	c.t.Helper()
	r, err := c.CallErr(name, args)
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if r.IsError {
		c.t.Fatalf("%s %v: %s", name, args, r.Text)
	}
	return r
}

// Fails runs a tool that must fail with an error containing want.
func (c *MCP) Fails(name string, args any, want string) Result {
	c.t.Helper()
	r, err := c.CallErr(name, args)
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if !r.IsError || !strings.Contains(r.Text, want) {
		c.t.Fatalf("%s %v: want an error containing %q, got isError=%v %q", name, args, want, r.IsError, r.Text)
	}
	return r
}

// Open opens a terminal and returns its id.
func (c *MCP) Open() string {
	c.t.Helper()
	id := c.OK(tools.TerminalOpen, nil).Str("sessionId")
	if !strings.HasPrefix(id, "pty-") {
		c.t.Fatalf("terminal_open: no session id")
	}
	return id
}

// Send runs text in session id (with Enter) and returns the result.
func (c *MCP) Send(id, text string) Result {
	c.t.Helper()
	return c.OK(tools.TerminalSend, map[string]any{"sessionId": id, "text": text})
}

// Share makes a share link to id and returns its token (the URL's
// fragment) and URL.
func (c *MCP) Share(id string, args map[string]any) (token, url string) {
	c.t.Helper()
	a := map[string]any{"sessionId": id}
	for k, v := range args {
		a[k] = v
	}
	url = c.OK(tools.TerminalShare, a).Str("url")
	_, token, ok := strings.Cut(url, "#token=")
	if !ok {
		c.t.Fatalf("share link without a token: %q", url)
	}
	return token, url
}
