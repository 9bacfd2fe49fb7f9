package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

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
	t.defs = t.definitions()
	t.params = map[string][]string{}
	for _, d := range t.defs {
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
	var r Result
	switch name {
	case TerminalOpen:
		r, err = t.open(ctx, owner, a)
	case TerminalSend:
		r, err = t.send(ctx, owner, a)
	case TerminalWait:
		r, err = t.wait(ctx, owner, a)
	case TerminalScreen:
		r, err = t.screen(ctx, owner, a)
	case TerminalResize:
		r, err = t.resize(ctx, owner, a)
	case TerminalMark:
		r, err = t.mark(ctx, owner, a)
	case TerminalShare:
		r, err = t.share(ctx, owner, a)
	case TerminalUnshare:
		r, err = t.unshare(ctx, owner, a)
	case TerminalRead:
		r, err = t.read(ctx, owner, a)
	case TerminalSignal:
		r, err = t.signal(ctx, owner, a)
	case TerminalClose:
		r, err = t.close(ctx, owner, a)
	case TerminalList:
		r, err = t.list(ctx, owner)
	case TaskOutput:
		r, err = t.taskOutput(ctx, owner, a)
	case TaskKill:
		r, err = t.taskKill(ctx, owner, a)
	}
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

func (t *Toolset) open(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	var req messages.SpawnRequest
	var err error
	if a.has("type") {
		if req.Type, err = a.str("type", true); err != nil {
			return Result{}, messages.InvalidArgument("type must be a non-empty string")
		}
	}
	if req.Name, err = a.str("name", false); err != nil {
		return Result{}, err
	}
	if req.Cwd, err = a.str("cwd", false); err != nil {
		return Result{}, err
	}
	req.Host = t.opts.DefaultHost
	if t.opts.DefaultCwd != "" && req.Host == "" {
		switch {
		case req.Cwd == "":
			req.Cwd = t.opts.DefaultCwd
		case !filepath.IsAbs(req.Cwd):
			req.Cwd = filepath.Join(t.opts.DefaultCwd, req.Cwd)
		}
	}
	sp, err := t.svc.Spawn(ctx, owner, req)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:       renderOpen(sp.Info(), t.opts.MaxResultBytes),
		Structured: OpenValue{SessionValue: sessionValue(sp.Info().Snapshot), Motd: sp.Info().Motd},
	}, nil
}

func sessionArg(a args) (messages.SessionID, error) {
	id, err := a.str("sessionId", true)
	return messages.SessionID(id), err
}

// send is terminal_send: it writes the input and waits for what the
// program does next, or starts it as a background task.
func (t *Toolset) send(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	req, bg, err := t.sendRequest(a)
	if err != nil {
		return Result{}, err
	}
	if t.opts.RefuseSecretInput && req.Text != "" {
		snap, err := t.svc.Session(owner, id).Describe(ctx)
		if err != nil {
			return Result{}, err
		}
		if snap.SecretPrompt {
			if t.opts.SecretLink != nil {
				return Result{}, fmt.Errorf("%w; call terminal_wait: its result carries a link (secretUrl) to give the user, who types the secret there themselves", ErrSecretPrompt)
			}
			return Result{}, ErrSecretPrompt
		}
	}
	if bg {
		r, err := t.sendInBackground(ctx, owner, id, req)
		return r, t.nameActiveTask(ctx, owner, id, err)
	}
	res, err := t.svc.Session(owner, id).Send(ctx, req)
	return t.foreground(ctx, owner, id, res, t.nameActiveTask(ctx, owner, id, err))
}

// maxRememberedTasks bounds Toolset.tasks.
const maxRememberedTasks = 4096

// nameActiveTask turns a SEND_ACTIVE refusal into one that says what to
// do when the active send is this session's background task: its id, and
// the tools that collect or interrupt it. The result is still a
// *messages.Error with the same code, so errors.Is(err,
// messages.ErrSendActive) holds. Any other error is returned as is.
func (t *Toolset) nameActiveTask(ctx context.Context, owner messages.Owner, id messages.SessionID, err error) error {
	if !errors.Is(err, messages.ErrSendActive) {
		return err
	}
	t.tasksMu.Lock()
	tid, ok := t.tasks[id]
	t.tasksMu.Unlock()
	if !ok {
		return err
	}
	snap, _, serr := t.svc.TaskStatus(ctx, owner, tid)
	if serr != nil || (snap.Status != messages.TaskRunning && snap.Status != messages.TaskStopping) {
		return err
	}
	return messages.Errorf(messages.CodeSendActive,
		"PTY session %s already has an active send: background task %s is %s; call task_output with taskId %q to wait for it and collect its output, or task_kill with taskId %q to interrupt it",
		id, tid, snap.Status, tid, tid)
}

// sendRequest reads terminal_send's arguments: the request, and whether
// it runs in the background.
func (t *Toolset) sendRequest(a args) (req messages.SendRequest, bg bool, err error) {
	if req.Text, err = a.text("text", t.opts.MaxTextBytes); err != nil {
		return req, false, err
	}
	if req.Submit, err = a.boolean("submit", true); err != nil {
		return req, false, err
	}
	if a.has("runInBackground") && t.opts.DisableRunInBackground {
		return req, false, ErrBackgroundDisabled
	}
	if bg, err = a.boolean("runInBackground", false); err != nil {
		return req, false, err
	}
	if req.Raw, err = a.boolean("raw", false); err != nil {
		return req, false, err
	}
	if req.Wait, err = t.policy(a, false); err != nil {
		return req, false, err
	}
	if req.Keys, err = a.strings("keys", messages.MaxKeys, messages.MaxKeyChars); err != nil {
		return req, false, err
	}
	if req.Paste, err = a.boolean("paste", false); err != nil {
		return req, false, err
	}
	if req.Screen, err = a.boolean("screen", false); err != nil {
		return req, false, err
	}
	return req, bg, nil
}

// sendInBackground starts req as a background task and acknowledges it.
func (t *Toolset) sendInBackground(ctx context.Context, owner messages.Owner, id messages.SessionID, req messages.SendRequest) (Result, error) {
	label := req.Text
	if label == "" {
		label = "(input)"
	}
	tid, err := t.svc.StartTask(ctx, owner, messages.TaskRequest{
		Session: id, Send: req, Label: string(id) + ": " + clip(label, 200), OutputLimitBytes: t.opts.MaxResultBytes,
	})
	if err != nil {
		return Result{}, err
	}
	t.tasksMu.Lock()
	if t.tasks == nil || len(t.tasks) >= maxRememberedTasks {
		// Sessions that ended without terminal_close leave entries:
		// forgetting them all costs only a less helpful refusal.
		t.tasks = map[messages.SessionID]messages.TaskID{}
	}
	t.tasks[id] = tid
	t.tasksMu.Unlock()
	return Result{
		Text:       renderAck(tid, t.opts.MaxResultBytes),
		Structured: BackgroundSendValue{Kind: "background", SessionID: string(id), TaskID: string(tid)},
	}, nil
}

// wait is terminal_wait: a send that writes nothing, with no silence
// unless asked, bounded by the task wait timeouts.
func (t *Toolset) wait(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	policy, err := t.policy(a, true)
	if err != nil {
		return Result{}, err
	}
	res, err := t.svc.Session(owner, id).Wait(ctx, policy)
	return t.foreground(ctx, owner, id, res, err)
}

// screen is terminal_screen.
func (t *Toolset) screen(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	sc, err := t.svc.Session(owner, id).Screen(ctx)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: renderScreen(&sc, t.opts.MaxResultBytes), Structured: ScreenToolValue{SessionID: string(id), Screen: screenValue(&sc)}}, nil
}

// resize is terminal_resize: the new size, then the screen.
func (t *Toolset) resize(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	rows, err := a.integer("rows")
	if err != nil {
		return Result{}, err
	}
	cols, err := a.integer("cols")
	if err != nil {
		return Result{}, err
	}
	if rows == nil || cols == nil {
		return Result{}, messages.InvalidArgument("rows and cols are required")
	}
	if err := t.svc.Session(owner, id).Resize(ctx, *rows, *cols); err != nil {
		return Result{}, err
	}
	return t.screen(ctx, owner, a)
}

// mark is terminal_mark: a label in the session's record.
func (t *Toolset) mark(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	label, err := a.str("label", true)
	if err != nil {
		return Result{}, err
	}
	seq, err := t.svc.Session(owner, id).Mark(ctx, label)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: fmt.Sprintf("marked %q at event %d of %s", label, seq, id), Structured: MarkValue{SessionID: string(id), Label: label, Seq: seq}}, nil
}

// policy reads a call's wait arguments within the server's bounds.
// terminal_wait waits until something happens, not for silence, unless
// silenceMs is given; its default deadline is WaitTimeout.
func (t *Toolset) policy(a args, wait bool) (messages.WaitPolicy, error) {
	var p messages.WaitPolicy
	ms := func(name string) (time.Duration, error) {
		v, err := a.integer(name)
		switch {
		case err != nil:
			return 0, err
		case v == nil:
			return 0, nil
		case *v < 1 || time.Duration(*v)*time.Millisecond > t.opts.MaxWaitTimeout:
			return 0, messages.InvalidArgument("%s must be an integer from 1 to %d, got %d", name, t.opts.MaxWaitTimeout.Milliseconds(), *v)
		}
		return time.Duration(*v) * time.Millisecond, nil
	}
	var err error
	if p.Timeout, err = ms("timeoutMs"); err != nil {
		return p, err
	}
	if p.Silence, err = ms("silenceMs"); err != nil {
		return p, err
	}
	if wait {
		if p.Timeout == 0 {
			p.Timeout = t.opts.WaitTimeout
		}
		p.NoSilence = p.Silence == 0
		if p.Pattern, err = a.str("pattern", false); err != nil {
			return p, err
		}
		cur, err := a.integer("cursor")
		switch {
		case err != nil:
			return p, err
		case cur != nil && *cur < 0:
			return p, messages.InvalidArgument("cursor must be an integer >= 0, got %d", *cur)
		case cur != nil:
			c := uint64(*cur)
			p.Since = &c
		}
		return p, nil
	}
	until, err := a.str("until", false)
	switch {
	case err != nil:
		return p, err
	case until == "prompt":
		p.NoSilence = true
	case until != "" && until != "ready":
		return p, messages.InvalidArgument("until must be \"ready\" or \"prompt\", got %q", until)
	}
	return p, nil
}

// foreground is a settled send's (or wait's) result; a call whose
// context ended says it was aborted.
func (t *Toolset) foreground(ctx context.Context, owner messages.Owner, id messages.SessionID, res messages.SendResult, err error) (Result, error) {
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("%w (%w)", ErrSendAborted, err)
		}
		return Result{}, err
	}
	secretURL := t.secretURL(owner, res)
	return Result{
		Text: renderSendLink(res, secretURL, t.opts.MaxResultBytes),
		Structured: ForegroundSendValue{
			Kind: "foreground", SessionID: string(id), Viewport: res.Viewport, WaitReason: string(res.WaitReason), Cause: string(res.Cause),
			SessionStatus: statusValue(res.Status), Truncated: res.Truncated, ExitCode: res.ExitCode, Reader: res.Reader,
			ElapsedMs: res.Elapsed.Milliseconds(), Unwritten: res.Unwritten, FirstUnwritten: res.FirstUnwritten,
			Secret: res.Secret, ForeignInput: res.ForeignInput, Cursor: res.Cursor, OmittedFrom: res.OmittedFrom, OmittedTo: res.OmittedTo, Seq: res.Seq,
			Running: processValues(res.Running), Screen: screenValue(res.Screen), Handback: handbackValue(res.Handback),
			SecretURL: secretURL, SecretEntered: res.SecretEntered,
		},
	}, nil
}

// secretURL is the link for a person to type the secret res waits for,
// or "" (no secret prompt, no Options.SecretLink, or it failed: the
// result then says to ask the user, as without a link).
func (t *Toolset) secretURL(owner messages.Owner, res messages.SendResult) string {
	if !res.Secret || res.SecretPrompt == nil || t.opts.SecretLink == nil {
		return ""
	}
	u, err := t.opts.SecretLink(owner, *res.SecretPrompt)
	if err != nil {
		t.opts.Log.Warn().Str("session", string(res.SecretPrompt.Session)).Err(err).Msg("no secret link for a secret prompt")
		return ""
	}
	return u
}

func processValues(ps []messages.Process) []ProcessValue {
	var out []ProcessValue
	for _, p := range ps {
		out = append(out, ProcessValue{PID: p.PID, Command: p.Command, Detached: p.Detached})
	}
	return out
}

func (t *Toolset) read(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	// Only the encoding is checked here; the runtime applies the defaults
	// and the range (messages.ReadRequest.Resolve).
	var req messages.ReadRequest
	if req.Offset, err = a.integer("offset"); err != nil {
		return Result{}, err
	}
	if req.Count, err = a.integer("count"); err != nil {
		return Result{}, err
	}
	cur, err := a.integer("cursor")
	switch {
	case err != nil:
		return Result{}, err
	case cur != nil && *cur < 0:
		return Result{}, messages.InvalidArgument("cursor must be an integer >= 0, got %d", *cur)
	case cur != nil:
		c := uint64(*cur)
		req.Cursor = &c
	}
	r, err := t.svc.Session(owner, id).Read(ctx, req)
	if err != nil {
		return Result{}, err
	}
	// A handback's text comes first; the page fits in what it leaves, so
	// a cursor read's cursor stops after the lines shown.
	text := withHandback(r.Handback, false, t.opts.MaxResultBytes, readReserve, func(limit int) string {
		if req.Cursor != nil {
			r = fitCursorRead(r, *req.Cursor, limit)
			return renderCursorRead(r, limit)
		}
		return renderRead(r, limit)
	})
	return Result{
		Text: text,
		Structured: ReadValue{SessionID: string(id), Text: r.Text, TotalLines: r.TotalLines,
			LineBegin: r.LineBegin, LineEnd: r.LineEnd, Truncated: r.Truncated,
			Cursor: r.Cursor, OmittedFrom: r.OmittedFrom, OmittedTo: r.OmittedTo, More: r.More,
			Handback: handbackValue(r.Handback)},
	}, nil
}

func (t *Toolset) signal(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	s, err := a.str("signal", true)
	if err != nil {
		return Result{}, messages.InvalidArgument("signal must be one of %v", messages.Signals)
	}
	// The runtime refuses a name outside the closed set (messages.ParseSignal).
	sig := messages.Signal(s)
	r, err := t.svc.Session(owner, id).Signal(ctx, sig)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:       renderSignal(sig, r, t.opts.MaxResultBytes),
		Structured: SignalValue{SessionID: string(id), Signal: string(sig), Delivered: r.Delivered, TargetPgid: r.TargetPgid, Reason: r.Reason},
	}, nil
}

func (t *Toolset) close(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	report, err := t.svc.Session(owner, id).Close(ctx, "model request")
	if err != nil {
		return Result{}, err
	}
	t.tasksMu.Lock()
	delete(t.tasks, id)
	t.tasksMu.Unlock()
	if t.opts.Sharing != nil {
		t.opts.Sharing.Links.Unshare(id) // a closed session's links die with it
	}
	v := CloseValue{SessionID: string(id), Outcome: "closed", Killed: nonNil(report.Killed), Survivors: nonNil(report.Survivors)}
	if report.Joined {
		v.Outcome = "already-closing"
	}
	if r := report.Recording; r != nil {
		v.Recording = &RecordingValue{Path: r.Path, Host: r.Host, Records: r.Records, SHA256: r.SHA256}
		if f := t.opts.FetchRecording; f != nil && !report.Joined {
			v.Recording.HostPath = r.Path
			if path, err := f(ctx, id, *r); err != nil {
				v.Recording.FetchError = err.Error()
			} else {
				v.Recording.Path = path
			}
		}
	}
	return Result{Text: renderClose(id, !report.Joined, v.Recording, t.opts.MaxResultBytes), Structured: v}, nil
}

func nonNil(p []int) []int {
	if p == nil {
		return []int{}
	}
	return p
}

func (t *Toolset) list(ctx context.Context, owner messages.Owner) (Result, error) {
	ss, err := t.svc.List(ctx, owner)
	if err != nil {
		return Result{}, err
	}
	v := ListValue{Sessions: make([]SessionValue, len(ss))}
	for i, s := range ss {
		v.Sessions[i] = sessionValue(s)
	}
	return Result{Text: renderList(ss, t.opts.MaxResultBytes), Structured: v}, nil
}

func taskArg(a args) (messages.TaskID, error) {
	id, err := a.str("taskId", true)
	return messages.TaskID(id), err
}

func (t *Toolset) taskOutput(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := taskArg(a)
	if err != nil {
		return Result{}, err
	}
	wait, err := a.boolean("wait", true)
	if err != nil {
		return Result{}, err
	}
	d := t.opts.WaitTimeout
	ms, err := a.integer("timeoutMs")
	switch {
	case err != nil:
		return Result{}, err
	case ms != nil && *ms < 0:
		return Result{}, messages.InvalidArgument("timeoutMs must be an integer >= 0, got %d", *ms)
	case ms != nil:
		d = time.Duration(*ms) * time.Millisecond
	}
	d = min(d, t.opts.MaxWaitTimeout)
	if !wait {
		d = 0
	}
	out, err := t.svc.TaskOutput(ctx, owner, id, d)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:       renderTaskOutput(out, t.opts.MaxResultBytes),
		Structured: TaskOutputValue{TaskID: string(id), Text: out.Text, Truncated: out.Truncated, Task: NewTaskValue(out.Task)},
	}, nil
}

func (t *Toolset) taskKill(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := taskArg(a)
	if err != nil {
		return Result{}, err
	}
	reason, err := a.str("reason", false)
	if err != nil {
		return Result{}, err
	}
	outcome, snap, err := t.svc.KillTask(ctx, owner, id)
	if err != nil {
		return Result{}, err
	}
	t.opts.Log.Debug().Str("task", string(id)).Str("reason", reason).Str("outcome", string(outcome)).Msg("task kill")
	return Result{
		Text:       renderKill(id, outcome, snap, t.opts.MaxResultBytes),
		Structured: TaskKillValue{TaskID: string(id), Outcome: string(outcome), Task: NewTaskValue(snap)},
	}, nil
}
