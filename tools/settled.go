package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// A settled send's result, shared by terminal_send and terminal_wait (a
// wait is a send that writes nothing): the wait arguments, the value, its
// schema and its text.

// ForegroundSendValue is terminal_send's value for a send that settled.
type ForegroundSendValue struct {
	Kind          string      `json:"kind"` // "foreground"
	SessionID     string      `json:"sessionId"`
	Viewport      string      `json:"viewport"`
	WaitReason    string      `json:"waitReason"`
	Cause         string      `json:"cause,omitempty"` // which condition ended the send
	SessionStatus StatusValue `json:"sessionStatus"`
	Truncated     bool        `json:"truncated"`
	ExitCode      *int        `json:"exitCode,omitempty"` // when the prompt marker settled the send
	Reader        string      `json:"reader,omitempty"`   // the program proven to wait on the terminal
	ElapsedMs     int64       `json:"elapsedMs"`
	// Unwritten counts lines of the text never written: the send ended
	// (deadline, cancel, exit) before their turn; they never will be.
	Unwritten      int    `json:"unwritten,omitempty"`
	FirstUnwritten string `json:"firstUnwritten,omitempty"`
	// Secret: the program waits for a secret (echo off): ask the user.
	Secret bool `json:"secret,omitempty"`
	// SecretURL, with Secret, is a link for the person to type the secret
	// straight into the terminal (Options.SecretLink); the model cannot
	// use it (it needs the person's console login).
	SecretURL string `json:"secretUrl,omitempty"`
	// SecretEntered: a person typed a secret at a prompt since the
	// previous result (the secret is in no result).
	SecretEntered bool `json:"secretEntered,omitempty"`
	// ForeignInput: input nobody sent that waited for the shell at its
	// prompt, discarded before the send (quoted).
	ForeignInput string `json:"foreignInput,omitempty"`
	// Cursor counts the final output lines when it settled; a truncated
	// viewport leaves out final lines [OmittedFrom, OmittedTo).
	Cursor      uint64 `json:"cursor"`
	OmittedFrom uint64 `json:"omittedFrom,omitempty"`
	OmittedTo   uint64 `json:"omittedTo,omitempty"`
	// Seq numbers the send's settle event in the session's record.
	Seq uint64 `json:"seq,omitempty"`
	// Screen: while a full-screen program shows the alternate screen.
	Screen *ScreenValue `json:"screen,omitempty"`
	// Running: what the command left running when it returned to the
	// prompt.
	Running []ProcessValue `json:"running,omitempty"`
	// Handback: on the first result after a person held the terminal,
	// what they did.
	Handback *HandbackValue `json:"handback,omitempty"`
}

// ProcessValue is a process left running in the session.
type ProcessValue struct {
	PID      int    `json:"pid"`
	Command  string `json:"command"`
	Detached bool   `json:"detached"` // it outlives the shell's hangup (nohup, setsid)
}

// settledSchema is the output schema of terminal_send and terminal_wait.
func settledSchema() schema {
	causes := []string{string(messages.CausePrompt), string(messages.CauseInput), string(messages.CausePattern), string(messages.CauseSilence), string(messages.CauseDeadline),
		string(messages.CauseCancelled), string(messages.CauseClosed), string(messages.CauseExit), string(messages.CauseFailed), string(messages.CauseTakenOver)}
	waitReasons := []string{string(messages.WaitStdinRead), string(messages.WaitInferredIdle), string(messages.WaitTimeout), string(messages.WaitSessionExit)}
	return schema{
		"type": "object",
		"properties": schema{
			"kind":           schema{"type": "string", "enum": []string{"foreground", "background"}},
			"sessionId":      schema{"type": "string"},
			"viewport":       schema{"type": "string"},
			"waitReason":     schema{"type": "string", "enum": waitReasons},
			"cause":          schema{"type": "string", "enum": causes, "description": "which condition ended the send; taken_over: a person took control of the terminal from the console (the command may still run; waitReason says what was true then)"},
			"sessionStatus":  statusSchema(),
			"truncated":      schema{"type": "boolean"},
			"exitCode":       schema{"type": "integer"},
			"reader":         schema{"type": "string"},
			"elapsedMs":      schema{"type": "integer"},
			"unwritten":      schema{"type": "integer", "description": "lines of the text never written (the send ended before their turn)"},
			"firstUnwritten": schema{"type": "string"},
			"screen":         screenSchema(),
			"secret":         schema{"type": "boolean", "description": "the program waits for a password or passphrase (echo off): ask the user to type it"},
			"secretUrl":      schema{"type": "string", "description": "with secret: a link for the user to type the secret straight into the terminal (it needs their console login); give it to them, never type the secret yourself, then call terminal_wait"},
			"secretEntered":  schema{"type": "boolean", "description": "a person entered a secret at a prompt since your previous result (the secret itself is in no result)"},
			"foreignInput":   schema{"type": "string", "description": "input nobody sent (a terminal's answers to queries in a file that was printed, bytes a program pushed) that waited at the shell's prompt and was discarded so the command ran as sent; quoted"},
			"cursor":         schema{"type": "integer", "description": "count of final output lines when the send settled: terminal_read with this cursor returns only what came after"},
			"seq":            schema{"type": "integer", "description": "the number of the send's settle event in the session's record"},
			"running": schema{"type": "array", "description": "processes the command left running (background jobs, nohup, disown)", "items": schema{
				"type": "object", "properties": schema{"pid": schema{"type": "integer"}, "command": schema{"type": "string"}, "detached": schema{"type": "boolean"}},
			}},
			"omittedFrom": schema{"type": "integer"},
			"omittedTo":   schema{"type": "integer", "description": "final lines [omittedFrom, omittedTo) the truncated viewport leaves out; read them with terminal_read cursor=omittedFrom"},
			"taskId":      schema{"type": "string"},
			"handback":    handbackSchema(),
		},
		"required": []string{"kind", "sessionId"},
	}
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
		return t.waitPolicy(a, p)
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

// waitPolicy is policy's rest for terminal_wait: its default deadline,
// no silence unless asked, the pattern and the cursor.
func (t *Toolset) waitPolicy(a args, p messages.WaitPolicy) (messages.WaitPolicy, error) {
	var err error
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

// renderSend is a send's (or a wait's) text: the handback first, when
// the result carries one, then the output and the metadata. A half-typed
// line was discarded when the result reports foreign input (only a send,
// which writes, discards: then its ForeignInput holds the line).
func renderSend(r messages.SendResult, limit int) string { return renderSendLink(r, "", limit) }

// renderSendLink is renderSend with the secret link for a person, when
// the result is at a secret prompt and one was made.
func renderSendLink(r messages.SendResult, secretURL string, limit int) string {
	// The result keeps room for its metadata without the optional lines.
	least := r
	least.Reader, least.ExitCode = "", nil
	reserve := len(sendMeta(least, secretURL)) + len(Marker) + 1
	return withHandback(r.Handback, r.ForeignInput != "", limit, reserve, func(limit int) string { return renderSendBody(r, secretURL, limit) })
}

func renderSendBody(r messages.SendResult, secretURL string, limit int) string {
	if r.Screen != nil {
		// A full-screen program: the screen is what it shows; its redraw
		// bytes are no log.
		meta := sendMeta(r, secretURL)
		return finalize(renderScreen(r.Screen, limit-len(meta))+meta, limit)
	}
	body := r.Viewport
	if body == "" {
		body = "(no new output)"
	}
	// Under a tiny cap the optional lines go first (reader, then exit
	// code), so the wait reason and the session status always show.
	meta := sendMeta(r, secretURL)
	if len(body)+len(meta)+len(Marker) > limit {
		for _, drop := range []func(*messages.SendResult){
			func(r *messages.SendResult) { r.Reader = "" },
			func(r *messages.SendResult) { r.ExitCode = nil },
		} {
			if len(meta)+len(Marker) <= limit {
				break
			}
			drop(&r)
			meta = sendMeta(r, secretURL)
		}
	}
	return tailWithMeta(body, meta, r.Truncated, limit)
}

// sendMeta is the metadata block of a foreground send: wait reason, the
// exit code and the reader where known, the session status; at a secret
// prompt, secretURL (when there is one) is the link for the person.
func sendMeta(r messages.SendResult, secretURL string) string {
	var b strings.Builder
	writeWaitMeta(&b, r)
	writeRunning(&b, r.Running)
	if r.ForeignInput != "" {
		b.WriteString("\n[discarded input nobody sent, waiting at the prompt before this command: ")
		b.WriteString(strconv.Quote(r.ForeignInput))
		b.WriteString("]")
	}
	if r.SecretEntered {
		// Said before a prompt that follows: the program may ask again
		// (a retry, a second passphrase).
		b.WriteString("\n[secret entered: A person entered the secret at the prompt.]")
	}
	writeSecretPrompt(&b, r, secretURL)
	if r.Unwritten > 0 {
		b.WriteString("\n[not written: ")
		b.WriteString(strconv.Itoa(r.Unwritten))
		b.WriteString(" line(s), from ")
		b.WriteString(strconv.Quote(clip(r.FirstUnwritten, 80)))
		b.WriteString("]")
	}
	return b.String()
}

// writeWaitMeta writes why the send settled: the wait reason, the cause
// when the reason alone does not say it, the exit code, the reader and
// the session status.
func writeWaitMeta(b *strings.Builder, r messages.SendResult) {
	b.WriteString("\n[wait: ")
	b.WriteString(string(r.WaitReason))
	b.WriteString("]")
	if r.Cause == messages.CauseTakenOver {
		// A person took the terminal over from the console: the send
		// settled at once, whatever the program was doing.
		b.WriteString("\n[cause: taken_over: a person took control of the terminal")
		if r.WaitReason == messages.WaitStdinRead {
			b.WriteString(" while it waited for input")
		} else {
			b.WriteString("; the command may still be running")
		}
		b.WriteString("; your input is refused (CONTROL_HELD) until they hand it back]")
	} else if r.Cause != "" && r.Cause != messages.CausePrompt && r.Cause != messages.CauseInput {
		// The wait reason alone does not say it: a cancel, a close, an
		// exit, a deadline or silence (the program may still run).
		b.WriteString("\n[cause: ")
		b.WriteString(string(r.Cause))
		b.WriteString("]")
	}
	if r.ExitCode != nil {
		b.WriteString("\n[exit code: ")
		b.WriteString(strconv.Itoa(*r.ExitCode))
		b.WriteString("]")
	}
	if r.Reader != "" {
		b.WriteString("\n[reader: ")
		b.WriteString(r.Reader)
		b.WriteString("]")
	}
	b.WriteString("\n[session: ")
	b.WriteString(r.Status.String())
	b.WriteString("]")
}

// writeRunning writes the processes the command left running.
func writeRunning(b *strings.Builder, running []messages.Process) {
	if len(running) == 0 {
		return
	}
	b.WriteString("\n[left running:")
	for i, p := range running {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" pid ")
		b.WriteString(strconv.Itoa(p.PID))
		b.WriteString(" ")
		b.WriteString(p.Command)
		if p.Detached {
			b.WriteString(" (detached)")
		}
	}
	b.WriteString("]")
}

// writeSecretPrompt tells the model, at a secret prompt, to have the
// user type the secret (through secretURL when there is one).
func writeSecretPrompt(b *strings.Builder, r messages.SendResult, secretURL string) {
	switch {
	case r.Secret && secretURL != "":
		// The model holds the link but cannot use it (the page needs the
		// person's console login); it is told not to try to type the
		// secret itself.
		b.WriteString("\n[secret prompt: The terminal waits for a secret")
		if line := strings.TrimSpace(promptLine(r)); line != "" {
			b.WriteString(" (")
			b.WriteString(strconv.Quote(clip(line, 120)))
			b.WriteString(")")
		}
		b.WriteString(". Do not type it yourself: give the user this link to type it: ")
		b.WriteString(secretURL)
		b.WriteString(" (it needs their console login). Then call terminal_wait.]")
	case r.Secret:
		b.WriteString("\n[secret prompt: it waits for a password or passphrase with echo off; ask the user to type it, never type a credential yourself]")
	}
}

// promptLine is the secret prompt's line on the screen, when known.
func promptLine(r messages.SendResult) string {
	if r.SecretPrompt == nil {
		return ""
	}
	return r.SecretPrompt.Line
}
