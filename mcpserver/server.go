package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// version is reported to MCP clients.
const version = "0.1.0"

// binding binds the tools to MCP. Each MCP session (the stdio connection, or
// one streamable-HTTP session) gets its own owner the first time it calls a
// tool; when the session ends, that owner is disposed, so its terminals
// and their process trees are gone.
type binding struct {
	svc   *actors.Service
	tools *tools.Toolset
	log   zerolog.Logger
	mcp   *mcp.Server

	// disposeTimeout bounds one owner's disposal (teardown of its trees).
	disposeTimeout time.Duration
	// progressEvery paces the progress notifications of a long send or
	// wait whose caller sent a progress token.
	progressEvery time.Duration

	// maxTerminals caps each owner's terminals (-max-terminals); opening
	// holds one slot per owner while a terminal_open checks and opens.
	maxTerminals int
	opening      map[messages.Owner]chan struct{}

	mu     sync.Mutex
	owners map[*mcp.ServerSession]messages.Owner
	// conns numbers the MCP sessions that got an owner, for its label.
	conns int
	// kept, with -resume-file: the owner the first MCP session gets, which
	// is detached, not disposed, when that session ends (resume.go).
	kept   messages.Owner
	detach bool
	closed bool
	done   chan struct{}  // closed by close: the watchers stop
	wg     sync.WaitGroup // one watcher per owned session and per running task

	// calls ends, by endCalls, every tool call in flight: the server is
	// shutting down (the SDK's close of a session waits for its calls but
	// does not cancel them).
	calls    context.Context
	endCalls context.CancelFunc

	// secrets, when set, mints the links of URL-mode elicitation of a
	// secret prompt (elicit.go), for the prompts the tools' results
	// noted in prompts; pending holds the input-required calls
	// (2026-07-28) awaiting their retry, by request state, under mu.
	secrets secretLinks
	prompts *promptBook
	pending map[string]*pendingSecret
}

func newBinding(svc *actors.Service, ts *tools.Toolset, log zerolog.Logger) *binding {
	s := &binding{
		svc: svc, tools: ts, log: log, owners: map[*mcp.ServerSession]messages.Owner{},
		maxTerminals: DefaultMaxTerminals, opening: map[messages.Owner]chan struct{}{},
		disposeTimeout: 30 * time.Second, progressEvery: time.Second, done: make(chan struct{}),
	}
	s.calls, s.endCalls = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "ptymcp", Title: "ptyactor terminals", Version: version}, &mcp.ServerOptions{
		Instructions: ts.Guidance(),
		// No logging capability: logs go to stderr only.
		Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.addTaskResources()
	for _, d := range ts.Definitions() {
		name := d.Name
		s.mcp.AddTool(&mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, OutputSchema: d.OutputSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return s.call(ctx, name, req), nil
			})
	}
	return s
}

func (s *binding) call(ctx context.Context, name string, req *mcp.CallToolRequest) *mcp.CallToolResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.calls, cancel)()
	owner := s.ownerFor(ctx, req.Session, principal(req.Extra))
	if tok := req.Params.GetProgressToken(); tok != nil && (name == tools.TerminalSend || name == tools.TerminalWait) {
		defer s.progress(ctx, req.Session, tok, name)()
	}
	if name == tools.TerminalOpen {
		release, err := s.reserveTerminal(ctx, owner)
		if err != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Error: " + err.Error()}}, IsError: true}
		}
		defer release()
	}
	secretTool := name == tools.TerminalSend || name == tools.TerminalWait
	if secretTool && req.Params.RequestState != "" {
		// The retry of a call that asked for a secret (2026-07-28): it
		// resumes that call, and never sends its text again.
		return s.resumeSecret(ctx, req, owner, name)
	}
	r := s.tools.Call(ctx, owner, name, req.Params.Arguments)
	res := toolResult(r)
	if fg, ok := r.Structured.(tools.ForegroundSendValue); ok && secretTool && fg.Secret {
		if el, ok := s.elicitSecret(ctx, req, owner, name, fg, res); ok {
			return el
		}
	}
	if bg, ok := r.Structured.(tools.BackgroundSendValue); ok {
		s.watchTask(req.Session, messages.TaskID(bg.TaskID))
	}
	return res
}

// progress tells a client that asked (a progress token) that a long send
// or wait is still waiting, every progressEvery, until the returned stop
// is called: MCP clients time calls out, and progress resets their clock.
func (s *binding) progress(ctx context.Context, ss *mcp.ServerSession, tok any, name string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.progressEvery)
		defer t.Stop()
		start := time.Now()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			waited := time.Since(start).Round(time.Second)
			_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: float64(n),
				Message: name + ": still waiting for the terminal (" + waited.String() + ")",
			})
		}
	})
	return func() { close(done); wg.Wait() }
}

// ownerFor returns the session's owner, minting it on first use and
// arranging its disposal when the session ends. A session that cannot get
// an owner (the service is shutting down) gets the zero owner, which every
// tool refuses. principal is who the HTTP guard authenticated ("" over
// stdio), for the owner's label.
func (s *binding) ownerFor(ctx context.Context, ss *mcp.ServerSession, principal string) messages.Owner {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.owners[ss]; ok || s.closed || ss == nil {
		return o
	}
	o, err := s.kept, error(nil)
	s.kept = messages.Owner{}
	if o.IsZero() {
		s.conns++
		o, err = s.svc.NewOwner(ctx, ownerLabel(ss, s.conns, principal))
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("cannot open an owner for the MCP session")
		return messages.Owner{}
	}
	s.owners[ss] = o
	s.log.Info().Str("mcp_session", ss.ID()).Str("owner", o.Label()).Msg("owner opened")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = ss.Wait() // the client disconnected, or the HTTP session ended
		s.dispose(ss)
	}()
	return o
}

// ownerLabel names an MCP session's owner for people (the console's owner
// column, the logs): the client's name from its initialize (clientInfo)
// and the connection's number on this server, "claude-code #1"; over
// HTTP, with the principal the guard authenticated, "claude-code #2
// (token@127.0.0.1)". The name is the client's word: cut, controls
// dropped.
func ownerLabel(ss *mcp.ServerSession, n int, principal string) string {
	name := ""
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		name = p.ClientInfo.Name
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name[:textcut.Head(name, maxClientName)])
	if name == "" {
		name = "mcp client"
	}
	label := name + " #" + strconv.Itoa(n)
	if principal != "" {
		label += " (" + principal + ")"
	}
	return label
}

// maxClientName bounds the client's name in an owner's label, in bytes.
const maxClientName = 64

func (s *binding) dispose(ss *mcp.ServerSession) {
	s.mu.Lock()
	o, ok := s.owners[ss]
	s.mu.Unlock()
	if !ok {
		return
	}
	// The record goes once the owner is disposed, so owned() counts an
	// owner until its processes are gone.
	defer func() {
		s.mu.Lock()
		delete(s.owners, ss)
		delete(s.opening, o)
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), s.disposeTimeout)
	defer cancel()
	start := time.Now()
	if s.detach {
		if err := remote.Get(s.svc).DetachOwner(ctx, o); err != nil {
			s.log.Error().Err(err).Str("mcp_session", ss.ID()).Msg("owner detach left failures")
			return
		}
		s.log.Info().Str("mcp_session", ss.ID()).Msg("owner detached: its terminals stay on the hosts for their grace")
		return
	}
	if err := s.svc.DisposeOwner(ctx, o); err != nil {
		s.log.Error().Err(err).Str("mcp_session", ss.ID()).Msg("owner disposal left failures")
		return
	}
	s.log.Info().Str("mcp_session", ss.ID()).Dur("took", time.Since(start)).Msg("owner disposed")
}

// owned reports how many MCP sessions hold an owner (for tests).
func (s *binding) owned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owners)
}

// close ends every MCP session (their owners are disposed by the watchers)
// and waits for the watchers, at most disposeTimeout past callsWait: a
// session's close waits for its calls still running, and a call that
// never returns must not hold the server up (the service's shutdown that
// follows disposes every owner). New sessions get no owner afterwards.
func (s *binding) close() {
	s.mu.Lock()
	if !s.closed {
		close(s.done)
	}
	s.closed = true
	s.mu.Unlock()
	s.endCalls()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for ss := range s.mcp.Sessions() {
			_ = ss.Close()
		}
		s.wg.Wait()
	}()
	t := time.NewTimer(callsWait + s.disposeTimeout)
	select {
	case <-closed:
		t.Stop()
	case <-t.C:
		s.log.Warn().Msg("MCP sessions still closing: shutting down without them")
		return
	}
	s.mu.Lock()
	kept := s.kept
	s.kept = messages.Owner{}
	s.mu.Unlock()
	if !kept.IsZero() {
		// No MCP session took it: its resumed terminals stay all the same.
		ctx, cancel := context.WithTimeout(context.Background(), s.disposeTimeout)
		defer cancel()
		if err := remote.Get(s.svc).DetachOwner(ctx, kept); err != nil {
			s.log.Error().Err(err).Msg("owner detach left failures")
		}
	}
}

// keep makes o the owner of the first MCP session, detached rather than
// disposed when it ends (ptymcp -resume-file).
func (s *binding) keep(o messages.Owner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept, s.detach = o, true
}
