package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
	"github.com/ptyactor/ptyactor/view/assets"
	"github.com/rs/zerolog"
)

// The command every elicitation test runs: bash's read -s is a secret
// prompt (echo off), and the length shows that the secret went in whole.
const (
	secretCmd  = `read -s -p 'pw: ' pw; echo len=${#pw}`
	testSecret = "hunter2-xyz" // len=11
	secretLen  = "len=11"
)

// secretPage is the console's secret page, in this process: view.Secrets
// behind view's handler, the server ptymcp runs with a console.
type secretPage struct {
	base string
	mu   sync.Mutex
	// minted counts the standalone links elicitation made.
	minted int
	links  consoleSecrets
}

func (sp *secretPage) Mint(owner messages.Owner, p messages.SecretPrompt) (mintedLink, error) {
	sp.mu.Lock()
	sp.minted++
	sp.mu.Unlock()
	return sp.links.Mint(owner, p)
}

func (sp *secretPage) count() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.minted
}

// enter types secret through the link at link, as the page does with
// what a person typed: POST /api/secret/<id> {token, secret}, with no
// console login (the link is standalone).
func (sp *secretPage) enter(ctx context.Context, link, secret string) error {
	page, token, ok := strings.Cut(link, "#token=")
	id, ok2 := strings.CutPrefix(page, sp.base+"/secret/")
	if !ok || !ok2 {
		return fmt.Errorf("not a secret link of %s: %s", sp.base, link)
	}
	body, _ := json.Marshal(map[string]string{"token": token, "secret": secret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sp.base+"/api/secret/"+id, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s: %s", resp.Status, msg)
	}
	return nil
}

// newElicitInproc is an in-process server with the console's secret
// links (view.Secrets behind view's handler on a loopback port), as
// ptymcp runs with -console: the tools' results carry the login-bound
// link, elicitation mints standalone ones.
func newElicitInproc(t *testing.T) (*inproc, *secretPage) {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testConfig(), Backends: []backend.Backend{local.New(local.Options{})}})
	secrets := view.NewSecrets(nil)
	v, err := view.New(view.Options{Source: view.ServiceSource(svc), OperatorToken: rand.Text(), Secrets: secrets, Assets: assets.FS(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(v)
	t.Cleanup(hs.Close)
	prompts := &promptBook{}
	ts, err := tools.New(svc, tools.Options{SecretLink: prompts.wrap(secretLink(secrets, hs.URL))})
	if err != nil {
		t.Fatal(err)
	}
	s := newBinding(svc, ts, zerolog.Nop())
	page := &secretPage{base: hs.URL, links: consoleSecrets{secrets: secrets, base: hs.URL}}
	s.secrets, s.prompts = page, prompts
	t.Cleanup(s.close)
	return &inproc{t: t, svc: svc, srv: s}, page
}

// clientWith connects a client with opts, asking for protocol version
// (empty: the SDK's newest, 2026-07-28).
func (p *inproc) clientWith(opts *mcp.ClientOptions, version string) *client {
	p.t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := testkit.Ctx(p.t)
	if _, err := p.srv.mcp.Connect(ctx, st, nil); err != nil {
		p.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		p.t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		p.t.Fatalf("negotiated %s, want %s", got, version)
	}
	p.t.Cleanup(func() { _ = cs.Close() })
	return &client{t: p.t, cs: cs}
}

// urlCaps declares URL-mode elicitation.
var urlCaps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}

// noSecret fails if the secret is anywhere in res as sent.
func noSecret(t *testing.T, res any) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), testSecret) {
		t.Fatalf("the secret is in the result: %s", b)
	}
}

// atSecretPrompt asserts the plain result at the secret prompt, with the
// tools' link (which needs the console login) when withLink.
func atSecretPrompt(t *testing.T, r result, withLink bool) {
	t.Helper()
	if r.IsError || r.S["secret"] != true || r.S["secretEntered"] != nil || !strings.Contains(r.Text, "[secret prompt:") ||
		strings.Contains(r.Text, "secret entered") || (r.str("secretUrl") != "") != withLink {
		t.Fatalf("want the plain result at the secret prompt, got %q %v", r.Text, r.S)
	}
}

// secretWentIn asserts the result after a person typed the secret.
func secretWentIn(t *testing.T, r result) {
	t.Helper()
	if r.IsError || !hasLine(r.Text, secretLen) || r.S["secretEntered"] != true || r.S["secret"] == true ||
		!strings.Contains(r.Text, "[secret entered: ") || r.S["secretUrl"] != nil || strings.Contains(r.Text, "#token=") {
		t.Fatalf("want the readiness after the secret, got %q %v", r.Text, r.S)
	}
	noSecret(t, r)
}

func hasLine(text, line string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// On 2025-11-25 a client with URL elicitation gets elicitation/create
// during the call and accepts (its user agreed to open the link); the
// person types the secret through the link; the client hears the
// elicitation complete, and the call's result is the terminal after the
// secret.
func TestElicitURLLegacy(t *testing.T) {
	p, f := newElicitInproc(t)
	ctx := testkit.Ctx(t)
	opts, asked, completed := acceptingClient()
	c := p.clientWith(opts, "2025-11-25")
	id := c.open(nil)
	done := callAsync(ctx, c, tools.TerminalSend, obj{"sessionId": id, "text": secretCmd})
	el := recv(t, ctx, asked, "no elicitation")
	if el.Mode != "url" || el.ElicitationID == "" || !strings.Contains(el.URL, "#token=") ||
		!strings.Contains(el.Message, `"pw:"`) || !strings.Contains(el.Message, id) || el.RequestedSchema != nil {
		t.Fatalf("elicitation %+v", el)
	}
	if err := f.enter(ctx, el.URL, testSecret); err != nil {
		t.Fatal(err)
	}
	secretWentIn(t, <-done)
	if got := recv(t, ctx, completed, "no notifications/elicitation/complete"); got != el.ElicitationID {
		t.Fatalf("completed %q, want %q", got, el.ElicitationID)
	}
	// The link was one-shot, and the shell is back at its prompt.
	if err := f.enter(ctx, el.URL, "again"); err == nil {
		t.Fatal("the link took a second secret")
	}
	if r := c.send(id, "echo after"); !hasLine(r.Text, "after") {
		t.Fatalf("after: %q", r.Text)
	}
}

// A client that declines (or cancels) gets the result as without
// elicitation: the secret prompt flagged, still waiting.
func TestElicitDeclined(t *testing.T) {
	p, f := newElicitInproc(t)
	for _, action := range []string{"decline", "cancel"} {
		var calls int
		var urls []string
		var mu sync.Mutex
		c := p.clientWith(&mcp.ClientOptions{
			Capabilities: urlCaps,
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				calls++
				urls = append(urls, req.Params.URL)
				mu.Unlock()
				return &mcp.ElicitResult{Action: action}, nil
			},
		}, "2025-11-25")
		id := c.open(nil)
		r := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": secretCmd})
		atSecretPrompt(t, r, true)
		mu.Lock()
		if calls != 1 {
			t.Fatalf("%s: %d elicitations", action, calls)
		}
		// The declined link is dead: the page refuses it.
		if err := f.enter(testkit.Ctx(t), urls[0], testSecret); err == nil || !strings.Contains(err.Error(), "410") {
			t.Fatalf("%s: the declined link: %v", action, err)
		}
		mu.Unlock()
		// A terminal_wait at the same prompt asks again.
		r = c.ok(tools.TerminalWait, obj{"sessionId": id, "timeoutMs": 5000})
		atSecretPrompt(t, r, true)
		mu.Lock()
		if calls != 2 {
			t.Fatalf("%s: %d elicitations after the wait", action, calls)
		}
		mu.Unlock()
	}
	if f.count() != 4 {
		t.Fatalf("%d links minted, want 4", f.count())
	}
}

// A client without URL elicitation (none at all, or forms only, on either
// protocol) gets the plain result: no link is minted, nothing is asked.
func TestElicitNotDeclared(t *testing.T) {
	p, f := newElicitInproc(t)
	formOnly := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a form-only client was asked")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	}
	for _, tc := range []struct {
		opts    *mcp.ClientOptions
		version string
	}{{nil, ""}, {nil, "2025-11-25"}, {formOnly, ""}, {formOnly, "2025-11-25"}} {
		c := p.clientWith(tc.opts, tc.version)
		id := c.open(nil)
		res, err := c.cs.CallTool(testkit.Ctx(t), &mcp.CallToolParams{Name: tools.TerminalSend, Arguments: obj{"sessionId": id, "text": secretCmd}})
		if err != nil || res.NeedsInput() || res.InputRequests != nil {
			t.Fatalf("version %q: %v %+v", tc.version, err, res)
		}
		atSecretPrompt(t, c.ok(tools.TerminalWait, obj{"sessionId": id, "timeoutMs": 5000}), true)
	}
	if n := f.count(); n != 0 {
		t.Fatalf("%d links minted for clients without URL elicitation", n)
	}
	// Each result's prompt was taken: none is kept for a later call.
	p.srv.prompts.mu.Lock()
	defer p.srv.prompts.mu.Unlock()
	if n := len(p.srv.prompts.m); n != 0 {
		t.Fatalf("%d prompts kept", n)
	}
}

// On 2026-07-28 the call returns an input-required result with a URL-mode
// elicitation; the person types the secret; the client's retry, carrying
// the input response, returns the terminal after the secret. The retry's
// state is one-shot: a second retry sends nothing.
func TestElicitInputRequired(t *testing.T) {
	p, f := newElicitInproc(t)
	ctx := testkit.Ctx(t)
	// The client does the retry itself, to see each round.
	c := p.clientWith(&mcp.ClientOptions{Capabilities: urlCaps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}, "2026-07-28")
	id := c.open(nil)
	args := obj{"sessionId": id, "text": secretCmd}
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.TerminalSend, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	el, _ := res.InputRequests[secretInput].(*mcp.ElicitParams)
	if !res.NeedsInput() || el == nil || el.Mode != "url" || el.ElicitationID == "" || !strings.Contains(el.URL, "#token=") ||
		res.RequestState == "" || len(res.Content) != 0 || res.StructuredContent != nil {
		t.Fatalf("want an input-required result with a URL elicitation, got %+v (%+v)", res, el)
	}
	if err := f.enter(ctx, el.URL, testSecret); err != nil {
		t.Fatal(err)
	}
	retry := &mcp.CallToolParams{Name: tools.TerminalSend, Arguments: args, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{secretInput: &mcp.ElicitResult{Action: "accept"}}}
	r, err := c.callParams(ctx, retry)
	if err != nil {
		t.Fatal(err)
	}
	secretWentIn(t, r)
	// The same retry again finds nothing pending, and sends nothing: the
	// shell's history holds no second read.
	r, err = c.callParams(ctx, retry)
	if err != nil || !r.IsError || !strings.Contains(r.Text, "requestState names no pending secret prompt") {
		t.Fatalf("a second retry: %v %q", err, r.Text)
	}
	if r := c.send(id, "history | grep -c 'rea[d] -s'"); !hasLine(r.Text, "1") {
		t.Fatalf("the command ran again: %q", r.Text)
	}
}

// On 2026-07-28 with the SDK's own retry (its default), and a client that
// declines: the retry returns the result at the secret prompt.
func TestElicitInputRequiredDeclined(t *testing.T) {
	p, f := newElicitInproc(t)
	var mu sync.Mutex
	var calls int
	c := p.clientWith(&mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if req.Params.Mode != "url" || req.Params.URL == "" {
				t.Errorf("elicitation %+v", req.Params)
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}, "")
	id := c.open(nil)
	atSecretPrompt(t, c.ok(tools.TerminalSend, obj{"sessionId": id, "text": secretCmd}), true)
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 || f.count() != 1 {
		t.Fatalf("%d elicitations, %d links", calls, f.count())
	}
}

// A client that accepts but whose person types nothing within the call's
// timeoutMs gets the result at the secret prompt, saying so; the link
// is revoked.
func TestElicitNotEnteredInTime(t *testing.T) {
	p, f := newElicitInproc(t)
	urls := make(chan string, 1)
	c := p.clientWith(&mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			urls <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, "2025-11-25")
	id := c.open(nil)
	r := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": secretCmd, "timeoutMs": 2000})
	if !strings.HasSuffix(r.Text, "\n"+notEnteredLine) {
		t.Fatalf("no line saying nothing was typed: %q", r.Text)
	}
	atSecretPrompt(t, r, true)
	if err := f.enter(testkit.Ctx(t), <-urls, testSecret); err == nil || !strings.Contains(err.Error(), "410") {
		t.Fatalf("the link after the call gave up: %v", err)
	}
}

// A person who typed the secret before the client's dialog closed with a
// decline (dismissed, timed out) still moved the terminal on: the result
// is the readiness after the secret, never a stale "type it" with a link.
func TestElicitTypedThenDeclined(t *testing.T) {
	p, f := newElicitInproc(t)
	c := p.clientWith(&mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if err := f.enter(ctx, req.Params.URL, testSecret); err != nil {
				t.Errorf("typing at the link: %v", err)
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}, "2025-11-25")
	id := c.open(nil)
	secretWentIn(t, c.ok(tools.TerminalSend, obj{"sessionId": id, "text": secretCmd}))
}
