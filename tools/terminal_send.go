package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalSend types into a terminal and waits for what follows.
const TerminalSend = "terminal_send"

// BackgroundSendValue is terminal_send's value with runInBackground.
type BackgroundSendValue struct {
	Kind      string `json:"kind"` // "background"
	SessionID string `json:"sessionId"`
	TaskID    string `json:"taskId"`
}

// sendDef is terminal_send's definition: without background sends it
// has no runInBackground.
func (t *Toolset) sendDef() Definition {
	desc := "Send text to a persistent terminal. By default Enter is submitted and the call waits for a prompt, stdin wait, output silence, timeout, or session exit." + controlDesc
	maxWaitMs := int(t.opts.MaxWaitTimeout.Milliseconds())
	props := schema{
		"sessionId": boundedStr("sessionId", sessionIDDesc),
		"text": schema{"type": "string", "maxLength": t.opts.MaxTextBytes,
			"description": fmt.Sprintf("UTF-8 text, typed as a person types: several lines go one at a time, each once the program reading the terminal took the previous one (so later lines can answer a program the first line starts). Control characters are written as given. May be empty: with submit it presses Enter only. At most %d bytes.", t.opts.MaxTextBytes)},
		"submit": boolProp("Press Enter after the text.", true),
		"raw":    boolProp("Write all of the text at once instead of line by line.", false),
		"keys": schema{"type": "array", "items": schema{"type": "string", "maxLength": messages.MaxKeyChars}, "maxItems": messages.MaxKeys,
			"description": "Named keys pressed after the text, e.g. [\"Escape\"], [\"Down\",\"Down\",\"Enter\"], [\"Ctrl-C\"]: Enter, Tab, Escape, Backspace, Delete, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, Ctrl-<letter>, Alt-<key>. Use with submit:false for full-screen programs."},
		"screen": boolProp("Return the terminal's screen too (automatic while a full-screen program is on the alternate screen; ask for it with programs such as top that draw on the main screen).", false),
		"paste":  boolProp("Paste the text at once, within bracketed-paste markers when the program turned them on (as a terminal pastes), instead of typing it.", false),
		"timeoutMs": schema{"type": "integer", "minimum": 1, "maximum": maxWaitMs,
			"description": "How long this send may wait at most, in milliseconds (default: the server's send timeout)."},
		"silenceMs": schema{"type": "integer", "minimum": 1, "maximum": maxWaitMs,
			"description": "Return after this much output silence (inferred_idle) instead of the server's default."},
		"until": schema{"type": "string", "enum": []string{"ready", "prompt"}, "default": "ready",
			"description": "ready: return at the first of prompt, input wait, silence, exit, timeout. prompt: ignore silence; return at the shell's prompt, a program's input wait, exit or timeout."},
	}
	if !t.opts.DisableRunInBackground {
		desc += " Background mode returns a task id for task_output/task_kill."
		props["runInBackground"] = boolProp("Return a task id at once instead of waiting; collect output with task_output, interrupt with task_kill.", false)
	}
	return Definition{
		Name:         TerminalSend,
		Description:  desc,
		InputSchema:  mustJSON(object(props, "sessionId", "text")),
		OutputSchema: mustJSON(settledSchema()),
	}
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

// maxRememberedTasks bounds Toolset.tasks.
const maxRememberedTasks = 4096

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

func renderAck(id messages.TaskID, limit int) string {
	return finalize("started background task "+string(id), limit)
}
