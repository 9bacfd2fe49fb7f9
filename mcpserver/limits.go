package mcpserver

// Caps on what one MCP client can hold: terminals per MCP session
// (-max-terminals) and, over HTTP, MCP sessions (-http-max-sessions).
// Both refusals wrap messages.ErrSessionLimit.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

const (
	// DefaultMaxTerminals is -max-terminals' default: plenty for an
	// agent, far below the descriptors a process has.
	DefaultMaxTerminals = 64
	// DefaultMaxHTTPSessions is -http-max-sessions' default: each
	// session holds memory until it ends or idles out.
	DefaultMaxHTTPSessions = 64
)

// terminalLimitError refuses a terminal_open beyond -max-terminals: the
// MCP session already holds Max terminals.
type terminalLimitError struct{ Max int }

func (e *terminalLimitError) Error() string {
	return fmt.Sprintf("terminal limit reached: this MCP session already has %d terminals (ptymcp -max-terminals %d); "+
		"close one with terminal_close (terminal_list shows them) before opening another", e.Max, e.Max)
}

func (e *terminalLimitError) Unwrap() error { return messages.ErrSessionLimit }

// httpSessionLimitError refuses an MCP session beyond -http-max-sessions.
type httpSessionLimitError struct{ Max int }

func (e *httpSessionLimitError) Error() string {
	return fmt.Sprintf("ptymcp: MCP session limit reached: %d sessions over HTTP are open (-http-max-sessions %d); "+
		"end one (HTTP DELETE with its Mcp-Session-Id) or wait until an idle one expires (-http-session-timeout)", e.Max, e.Max)
}

func (e *httpSessionLimitError) Unwrap() error { return messages.ErrSessionLimit }

// reserveTerminal holds the owner's opening slot and checks that it has
// fewer than maxTerminals terminals; release ends the hold once the open
// is done, so that concurrent opens cannot pass the cap together.
func (s *binding) reserveTerminal(ctx context.Context, owner messages.Owner) (release func(), err error) {
	if owner.IsZero() || s.maxTerminals <= 0 {
		return func() {}, nil // the tools refuse the zero owner
	}
	s.mu.Lock()
	sem, ok := s.opening[owner]
	if !ok {
		sem = make(chan struct{}, 1)
		s.opening[owner] = sem
	}
	s.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release = func() { <-sem }
	list, err := s.svc.List(ctx, owner)
	if err != nil {
		return release, nil // the open itself reports the trouble
	}
	if len(list) >= s.maxTerminals {
		release()
		return nil, &terminalLimitError{Max: s.maxTerminals}
	}
	return release, nil
}

// sessionCap refuses, beyond max, a request that would start an MCP
// session (a POST without Mcp-Session-Id). live counts the sessions; a
// request starting one counts from its arrival until it is answered, so
// concurrent initializes cannot pass the cap together (one may be
// refused while another's session is being counted twice). A session
// that ends (DELETE, idle timeout) frees its slot.
type sessionCap struct {
	next    http.Handler
	max     int
	live    func() int
	log     zerolog.Logger
	mu      sync.Mutex
	pending int
}

func (h *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		h.next.ServeHTTP(w, r)
		return
	}
	h.mu.Lock()
	if h.live()+h.pending >= h.max {
		h.mu.Unlock()
		err := &httpSessionLimitError{Max: h.max}
		h.log.Warn().Int("max_sessions", h.max).Msg("MCP session refused: the cap is reached (-http-max-sessions)")
		body, _ := json.Marshal(map[string]any{
			"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32000, "message": err.Error()},
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(append(body, '\n'))
		return
	}
	h.pending++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.pending--
		h.mu.Unlock()
	}()
	h.next.ServeHTTP(w, r)
}

// liveSessions counts the MCP server's sessions.
func (s *binding) liveSessions() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}
