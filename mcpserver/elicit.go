package mcpserver

// URL-mode elicitation of a secret (MCP 2025-11-25, SEP-1036): when a
// terminal_send or terminal_wait returns at a secret prompt (a password
// read with echo off), a client that declared URL-mode elicitation gets a
// one-shot link for its user, and the call goes on once the person typed
// the secret there: its result is the terminal's next readiness, which
// says a secret was entered, never what. The specification forbids form
// elicitation for secrets (a form's answer passes through the client and
// the server's protocol messages); a link's page writes the secret
// straight into the terminal (actors.Session.EnterSecret), and the model
// sees neither the secret nor the link.
//
// Which clients get what:
//   - up to protocol 2025-11-25, with elicitation {"url": {}}: the call
//     sends elicitation/create (mode "url") and waits for the person;
//     once the secret is in, notifications/elicitation/complete, then the
//     result of a wait to the next readiness;
//   - on 2026-07-28, where a server sends no requests of its own (the SDK
//     refuses Elicit there): the call returns an input-required result
//     with a URL-mode elicitation input request; the client's retry of the
//     call, carrying the input response, waits for the person and returns
//     the next readiness. The retry never runs the call again: its text
//     was the command that led to the prompt;
//   - any other client, or a client that declines: the result as without
//     elicitation (the secret prompt flagged).

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
)

// secretLinks mints the one-shot links a person types a secret through
// (consoleSecrets; a fake in tests).
type secretLinks interface {
	// Mint makes a link to a page where a person types the secret for
	// prompt p of owner's terminal; its token alone admits (it goes to
	// the MCP client's user, never to the model, so it needs no console
	// login).
	Mint(owner messages.Owner, p messages.SecretPrompt) (mintedLink, error)
}

// mintedLink is a minted link: its URL; Entered, closed once a secret
// was written at its prompt (through it or another link); Revoke kills
// it (the client declined, or the call stopped waiting).
type mintedLink struct {
	URL     string
	Entered <-chan struct{}
	Revoke  func()
}

// consoleSecrets makes standalone links on the console at base, the
// page that view.Secrets serves (/secret/<session>#token=...).
type consoleSecrets struct {
	secrets *view.Secrets
	base    string
}

func (c consoleSecrets) Mint(owner messages.Owner, p messages.SecretPrompt) (mintedLink, error) {
	token, err := c.secrets.Mint(owner, p, true)
	if err != nil {
		return mintedLink{}, err
	}
	return mintedLink{
		URL:     c.base + "/secret/" + url.PathEscape(string(p.Session)) + "#token=" + token,
		Entered: c.secrets.Done(token),
		Revoke:  func() { c.secrets.Revoke(token) },
	}, nil
}

// promptBook keeps the secret prompt each of an owner's terminals last
// reported in a result, as the tools' link maker (tools.Options.
// SecretLink) is handed it: the tools' value does not carry the prompt's
// wait, and elicitation mints its own link for it. A terminal has one
// send at a time, so the entry a call takes right after its result is
// that result's prompt.
type promptBook struct {
	mu sync.Mutex
	m  map[promptKey]messages.SecretPrompt
}

type promptKey struct {
	owner   messages.Owner
	session messages.SessionID
}

// wrap returns the tools' link maker that notes each prompt, then makes
// the result's link with next.
func (b *promptBook) wrap(next func(messages.Owner, messages.SecretPrompt) (string, error)) func(messages.Owner, messages.SecretPrompt) (string, error) {
	return func(o messages.Owner, p messages.SecretPrompt) (string, error) {
		b.mu.Lock()
		if b.m == nil {
			b.m = map[promptKey]messages.SecretPrompt{}
		}
		b.m[promptKey{o, p.Session}] = p
		b.mu.Unlock()
		return next(o, p)
	}
}

// take returns and forgets the prompt the terminal last reported.
func (b *promptBook) take(o messages.Owner, session messages.SessionID) (messages.SecretPrompt, bool) {
	if b == nil {
		return messages.SecretPrompt{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := promptKey{o, session}
	p, ok := b.m[k]
	delete(b.m, k)
	return p, ok
}

const (
	// secretInput is the key of the input request on 2026-07-28.
	secretInput = "secret"
	// defaultSecretWait bounds how long a call waits for a person to type
	// a secret when the call gives no timeoutMs: a person must notice the
	// request, open the link and type; progress notifications keep the
	// client's clock from running out meanwhile.
	defaultSecretWait = 5 * time.Minute
	// maxPendingSecrets bounds the input-required calls awaiting a retry,
	// over all owners: a client that never retries leaves one until its
	// deadline.
	maxPendingSecrets = 256
)

// pendingSecret is an input-required call (2026-07-28) awaiting the
// client's retry: what the retry resumes.
type pendingSecret struct {
	owner    messages.Owner
	tool     string
	session  string
	orig     *mcp.CallToolResult // the result at the secret prompt
	link     mintedLink
	deadline time.Time
	timeout  *int64 // the call's timeoutMs, for the wait after the secret
}

// callShape is what a terminal_send or terminal_wait call's arguments say
// that elicitation needs: the terminal, and the call's deadline if given.
type callShape struct {
	SessionID string `json:"sessionId"`
	TimeoutMs *int64 `json:"timeoutMs"`
	// LegacyTimeoutMs is the old spelling tools still accept (tools.LegacyNames).
	LegacyTimeoutMs *int64 `json:"timeout_ms"`
}

// urlElicitation reports whether the calling client declared URL-mode
// elicitation, and whether it speaks 2026-07-28 or later (input requests
// instead of server requests). On 2026-07-28 each request carries the
// client's capabilities in its _meta; before, the initialize did.
func urlElicitation(req *mcp.CallToolRequest) (ok, inputRequests bool) {
	meta := req.Params.GetMeta()
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v >= "2026-07-28" {
		raw, err := json.Marshal(meta[mcp.MetaKeyClientCapabilities])
		var caps mcp.ClientCapabilities
		if err != nil || json.Unmarshal(raw, &caps) != nil {
			return false, true
		}
		return caps.Elicitation != nil && caps.Elicitation.URL != nil, true
	}
	if req.Session == nil {
		return false, false
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil {
		return false, false
	}
	// The SDK refuses a server's Elicit from 2026-07-28 on (by the version
	// the client asked for), so that is the line here too.
	return true, ip.ProtocolVersion >= "2026-07-28"
}

// elicitSecret takes over a send's or wait's result at a secret prompt
// for a client that elicits by URL; ok false leaves the result as it is.
func (s *binding) elicitSecret(ctx context.Context, req *mcp.CallToolRequest, owner messages.Owner, name string, fg tools.ForegroundSendValue, orig *mcp.CallToolResult) (*mcp.CallToolResult, bool) {
	// Taken whether or not the client elicits: the book keeps no prompt
	// past the result that reported it.
	p, ok := s.prompts.take(owner, messages.SessionID(fg.SessionID))
	elicits, inputRequests := urlElicitation(req)
	if s.secrets == nil || !elicits || !fg.Secret || !ok {
		return nil, false
	}
	var shape callShape
	_ = json.Unmarshal(req.Params.Arguments, &shape)
	if shape.TimeoutMs == nil {
		shape.TimeoutMs = shape.LegacyTimeoutMs
	}
	link, err := s.secrets.Mint(owner, p)
	if err != nil {
		s.log.Warn().Err(err).Str("session", fg.SessionID).Msg("no secret link for the prompt: the result goes back without elicitation")
		return nil, false
	}
	params := &mcp.ElicitParams{Mode: "url", URL: link.URL, ElicitationID: rand.Text(), Message: secretMessage(fg.SessionID, p)}
	wait := defaultSecretWait
	if shape.TimeoutMs != nil && *shape.TimeoutMs > 0 {
		wait = time.Duration(*shape.TimeoutMs) * time.Millisecond
	}
	if inputRequests {
		key, ok := s.park(&pendingSecret{owner: owner, tool: name, session: fg.SessionID, orig: orig,
			link: link, deadline: time.Now().Add(wait), timeout: shape.TimeoutMs})
		if !ok {
			link.Revoke()
			return nil, false
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{secretInput: params}, RequestState: key}, true
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	er, err := req.Session.Elicit(wctx, params)
	if err != nil || er.Action != "accept" {
		if entered(link) {
			// The person typed it before the client's dialog closed (or
			// its answer failed): the terminal went on.
			return s.afterSecret(ctx, owner, fg.SessionID, shape.TimeoutMs), true
		}
		if err != nil {
			s.log.Info().Err(err).Str("session", fg.SessionID).Msg("secret elicitation failed: the result goes back as it was")
		}
		link.Revoke()
		return orig, true
	}
	select {
	case <-link.Entered:
	case <-wctx.Done():
		link.Revoke()
		return notEntered(orig, ctx), true
	}
	if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: params.ElicitationID}); err != nil {
		s.log.Info().Err(err).Msg("elicitation complete notification not sent")
	}
	return s.afterSecret(ctx, owner, fg.SessionID, shape.TimeoutMs), true
}

// resumeSecret answers the retry of an input-required call (2026-07-28):
// the state names the pending call, whose result it gives back when the
// client declined, or the next readiness once the person typed the
// secret. It never runs the call again.
func (s *binding) resumeSecret(ctx context.Context, req *mcp.CallToolRequest, owner messages.Owner, name string) *mcp.CallToolResult {
	s.mu.Lock()
	p := s.pending[req.Params.RequestState]
	delete(s.pending, req.Params.RequestState)
	s.mu.Unlock()
	var shape callShape
	_ = json.Unmarshal(req.Params.Arguments, &shape)
	if shape.TimeoutMs == nil {
		shape.TimeoutMs = shape.LegacyTimeoutMs
	}
	if p != nil && (p.owner != owner || p.tool != name || p.session != shape.SessionID) {
		p.link.Revoke()
		p = nil
	}
	if p == nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Error: " + messages.InvalidArgument(
			"requestState names no pending secret prompt of this call (it was answered, or its time ran out): nothing was sent; call terminal_wait for the terminal's state").Error()}}}
	}
	er, _ := req.Params.InputResponses[secretInput].(*mcp.ElicitResult)
	if er == nil || er.Action != "accept" {
		if entered(p.link) {
			return s.afterSecret(ctx, owner, p.session, p.timeout) // typed before the decline
		}
		p.link.Revoke()
		return p.orig
	}
	wctx, cancel := context.WithDeadline(ctx, p.deadline)
	defer cancel()
	select {
	case <-p.link.Entered:
	case <-wctx.Done():
		p.link.Revoke()
		return notEntered(p.orig, ctx)
	}
	return s.afterSecret(ctx, owner, p.session, p.timeout)
}

// entered reports whether a secret was already written at link's prompt.
func entered(link mintedLink) bool {
	select {
	case <-link.Entered:
		return true
	default:
		return false
	}
}

// park keeps p for the client's retry under a fresh random key (the
// request state, which a client echoes and cannot forge), dropping the
// pending calls whose deadline passed.
func (s *binding) park(p *pendingSecret) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, q := range s.pending {
		if now.After(q.deadline) {
			q.link.Revoke()
			delete(s.pending, k)
		}
	}
	if len(s.pending) >= maxPendingSecrets {
		return "", false
	}
	if s.pending == nil {
		s.pending = map[string]*pendingSecret{}
	}
	key := rand.Text()
	s.pending[key] = p
	return key, true
}

// afterSecret is the call's result once a person typed the secret: a
// wait to the terminal's next readiness (the program reading the secret
// goes on), which says a secret was entered (secretEntered).
func (s *binding) afterSecret(ctx context.Context, owner messages.Owner, session string, timeoutMs *int64) *mcp.CallToolResult {
	args := map[string]any{"sessionId": session}
	if timeoutMs != nil {
		args["timeoutMs"] = *timeoutMs
	}
	raw, _ := json.Marshal(args)
	return toolResult(s.tools.Call(ctx, owner, tools.TerminalWait, raw))
}

// notEnteredLine ends a result whose person typed no secret in time.
const notEnteredLine = "[secret prompt: the user was asked through the client but typed no secret in time; it still waits unless the program went on]"

// notEntered is the result at the secret prompt, saying the person typed
// nothing while the call waited; a call whose context ended (cancelled,
// the server stopping) gets it unchanged.
func notEntered(orig *mcp.CallToolResult, ctx context.Context) *mcp.CallToolResult {
	if ctx.Err() != nil {
		return orig
	}
	res := *orig
	res.Content = append([]mcp.Content(nil), orig.Content...)
	appendText(&res, notEnteredLine)
	return &res
}

// appendText adds a line to a result's (first) text.
func appendText(res *mcp.CallToolResult, line string) {
	for i, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc2 := *tc
			tc2.Text += "\n" + line
			res.Content[i] = &tc2
			return
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: line})
}

// secretMessage is what the client shows its user with the link.
func secretMessage(session string, p messages.SecretPrompt) string {
	prompt := p.Line
	if prompt == "" {
		prompt = "(no prompt text)"
	}
	return fmt.Sprintf("%s in terminal %s waits for a secret (a password or passphrase) at %q. Open the link to type it: it goes straight into the terminal, never to the AI model.",
		p.Reader, session, prompt)
}

// toolResult is a tool's result as MCP sends it.
func toolResult(r tools.Result) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
	if r.Structured != nil {
		res.StructuredContent = r.Structured
	}
	return res
}
