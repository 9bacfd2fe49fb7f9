package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
)

// Result is one tool call's outcome.
type Result struct {
	// Text is what the model reads, at most MaxResultBytes long.
	Text string
	// Structured is the tool's value (the *Value types of this package),
	// nil for errors.
	Structured any
	// IsError marks a failed call; Text is then "Error: <message>".
	IsError bool
	// Err is the typed error behind a failed call, for Go callers.
	Err error
}

// Errors a call can fail with besides the runtime's (messages.Err*),
// argument errors among them (messages.ErrInvalidArgument).
var (
	// ErrNoAgent: the call carries no owner.
	ErrNoAgent = errors.New("terminal tools require an initiating agent")
	// ErrUnknownTool: no tool has that name (or it is disabled).
	ErrUnknownTool = errors.New("unknown tool")
	// ErrBackgroundDisabled: runInBackground with DisableRunInBackground.
	ErrBackgroundDisabled = errors.New("background terminal sends are disabled by tool-pty configuration")
	// ErrSendAborted: the caller's context ended during a foreground send;
	// the send was interrupted and settled first.
	ErrSendAborted = errors.New("terminal send aborted")
	// ErrSecretPrompt: text for a session waiting at a secret prompt,
	// with Options.RefuseSecretInput.
	ErrSecretPrompt = errors.New("the program is waiting for a secret (a password or passphrase, typed with echo off); this server does not take it from the model: ask the user to type it into the terminal")
)

// Toolset serves the tools over one Service. It is safe for concurrent use;
// every call names its owner, and sessions and tasks are authorized against
// it.
type Toolset struct {
	svc    *actors.Service
	opts   Options
	defs   []Definition
	tools  map[string]tool     // the tools these options offer, by name
	params map[string][]string // tool → allowed parameter names
	// maxArgBytes bounds a call's raw arguments: the largest text, every
	// byte escaped (\uXXXX: 6 bytes), and room for the other parameters
	// at their bounds (keys, pattern, ids, cwd).
	maxArgBytes int

	// tasks remembers each session's latest background send, so a send
	// refused as SEND_ACTIVE can name the task to collect or kill (the
	// runtime's refusal knows the session, not the task). One entry per
	// session, dropped at its close.
	tasksMu sync.Mutex
	tasks   map[messages.SessionID]messages.TaskID
}

// New validates opts and builds the tool definitions.
func New(svc *actors.Service, opts Options) (*Toolset, error) {
	if svc == nil {
		return nil, errors.New("tools: nil service")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Toolset{svc: svc, opts: o, maxArgBytes: 6*o.MaxTextBytes + argSlackBytes}
	t.tools = map[string]tool{}
	t.params = map[string][]string{}
	for _, tl := range toolTable {
		if tl.offered != nil && !tl.offered(o) {
			continue
		}
		d := tl.def(t)
		t.defs = append(t.defs, d)
		t.tools[d.Name] = tl
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(d.InputSchema, &s)
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		t.params[d.Name] = names
	}
	return t, nil
}

// argSlackBytes is the room in a call's arguments besides its text:
// MaxKeys keys of MaxKeyChars characters, a pattern, ids and a path, all
// escaped, fit in it.
const argSlackBytes = 6*(messages.MaxKeys*(messages.MaxKeyChars+3)+messages.MaxPatternChars+maxPathChars+maxReasonChars+2*maxIDChars) + 4096

// Options returns the effective options (defaults applied).
func (t *Toolset) Options() Options { return t.opts }

// Definitions returns the tools in a stable order. Without background
// sends, terminal_send has no runInBackground and the task tools are
// absent.
func (t *Toolset) Definitions() []Definition { return append([]Definition(nil), t.defs...) }

// Guidance is the short usage text for a system prompt.
const Guidance = "Use a terminal session only when work needs persistent terminal state or interactive stdin; prefer one-shot command, read, write and edit tools for bounded operations. Track every terminal session id and close sessions that no longer matter. An inferred_idle or timeout result does not prove the foreground command exited; stdin_read means the program (or the shell prompt) is waiting for input, and the exit code is shown when the shell prompt returned. A result marked secret is a password or passphrase prompt: ask your user to type it themselves (give them the result's secretUrl when it has one); never type a credential. A person may take control of a terminal from the console: until they hand it back, calls that type, resize, signal or close it fail with CONTROL_HELD (wait with terminal_wait), and your next result on it then says what they did."

// backgroundGuidance is added when background sends are enabled.
const backgroundGuidance = " For long-running commands, send with runInBackground and collect output with task_output; task_kill interrupts it with a real SIGINT."

// Guidance returns the usage text for this toolset's configuration.
func (t *Toolset) Guidance() string {
	if t.opts.DisableRunInBackground {
		return Guidance
	}
	return Guidance + backgroundGuidance
}

// Call runs one tool for owner. It never panics on bad input: malformed
// arguments, unknown tools and runtime refusals all come back as error
// results whose text is bounded like any other.
func (t *Toolset) Call(ctx context.Context, owner messages.Owner, name string, raw json.RawMessage) Result {
	allowed, ok := t.params[name]
	if !ok {
		if name == TaskOutput || name == TaskKill {
			// Only the task tools can be missing; say why.
			return t.fail(name, fmt.Errorf("%w %q: %w", ErrUnknownTool, name, ErrBackgroundDisabled))
		}
		return t.fail(name, fmt.Errorf("%w %q", ErrUnknownTool, name))
	}
	if owner.IsZero() {
		return t.fail(name, ErrNoAgent)
	}
	if name == TerminalSend && t.opts.DisableRunInBackground {
		// Checked before the unknown-parameter rule, so a forced
		// runInBackground gets the specific refusal.
		allowed = append(allowed[:len(allowed):len(allowed)], "runInBackground")
	}
	if len(raw) > t.maxArgBytes {
		// Refused before anything decodes it.
		return t.fail(name, messages.InvalidArgument("arguments are %d bytes of JSON; the limit is %d (text at most %d bytes: send large input in pieces, or write it to a file with another tool)", len(raw), t.maxArgBytes, t.opts.MaxTextBytes))
	}
	a, err := parseArgs(raw, allowed)
	if err != nil {
		return t.fail(name, err)
	}
	r, err := t.tools[name].call(t, ctx, owner, a)
	if err != nil {
		return t.fail(name, err)
	}
	r.Text = finalize(r.Text, t.opts.MaxResultBytes)
	return r
}

func (t *Toolset) fail(name string, err error) Result {
	t.opts.Log.Debug().Str("tool", name).Err(err).Msg("tool call failed")
	return Result{Text: renderError(err, t.opts.MaxResultBytes), IsError: true, Err: err}
}
