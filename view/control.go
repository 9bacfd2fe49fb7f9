package view

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// Taking over: an operator's page takes the session's input, types into
// it, resizes it and hands it back over its watch socket.
//
//	page → server: {"t":"take","interrupt":bool}
//	               {"t":"input","data":"<keys as xterm's onData gives them>"}
//	               {"t":"resize","rows":R,"cols":C}   (while holding)
//	               {"t":"return"}
//	server → page: {"t":"control","holder","person","you","since","epoch","idleLeftMs","idleTimeoutMs"}
//	               {"t":"refused","code","message"}   (not final: the view goes on)
//
// The viewer keeps its hold (a Controller) between messages; once control
// moved on (another page took it, it was returned, the idle timeout ran
// out) the session refuses the hold's input as stale and writes nothing.

// maxMessage bounds a page's message: a paste of up to maxInput bytes,
// escaped as JSON.
const (
	maxInput   = 1 << 20
	maxMessage = 4 << 20
)

// pageMessage is what a page sends after its hello.
type pageMessage struct {
	T         string `json:"t"`
	Interrupt bool   `json:"interrupt"`
	Data      string `json:"data"`
	Rows      int    `json:"rows"`
	Cols      int    `json:"cols"`
}

// read dispatches what the page sends after its hello, one message at a
// time (so a person's input is written in order). It ends the view when
// the socket closes.
func (v *viewer) read(ctx context.Context, cancel context.CancelFunc) {
	defer cancel()
	for {
		b, err := v.readText(ctx)
		if err != nil {
			return
		}
		var m pageMessage
		if err := json.Unmarshal(b, &m); err != nil {
			err = v.refuse(ctx, "bad_message", "a message that is not JSON")
		} else {
			err = v.dispatch(ctx, m)
		}
		if err != nil {
			return
		}
	}
}

// dispatch answers one page message; its error is the socket's.
func (v *viewer) dispatch(ctx context.Context, m pageMessage) error {
	switch m.T {
	case "take", "input", "resize", "return":
	default:
		return v.refuse(ctx, "bad_message", "unknown message "+m.T)
	}
	if v.readOnly {
		return v.refuse(ctx, "read_only", "this view cannot type into the terminal")
	}
	if m.T == "take" {
		return v.take(ctx, m.Interrupt)
	}
	v.mu.Lock()
	hold := v.hold
	v.mu.Unlock()
	if hold == nil {
		return v.refuse(ctx, "not_holding", "take control first")
	}
	var err error
	switch m.T {
	case "input":
		if len(m.Data) > maxInput {
			return v.refuse(ctx, "too_large", "input over 1 MiB at once is refused")
		}
		err = hold.Type(ctx, []byte(m.Data))
	case "resize":
		err = hold.Resize(ctx, m.Rows, m.Cols)
	case "return":
		if _, err = hold.Return(ctx); err == nil {
			return v.refresh(ctx)
		}
	}
	if err == nil {
		return nil
	}
	if serr := v.refuseErr(ctx, err); serr != nil {
		return serr
	}
	if errors.Is(err, messages.ErrControlStale) {
		// The page learns at once that it holds nothing now.
		return v.refresh(ctx)
	}
	return nil
}

// take takes the session's input for the operator.
func (v *viewer) take(ctx context.Context, interrupt bool) error {
	hold, err := v.srv.opts.Source.TakeControl(ctx, v.id, messages.TakeControlRequest{
		Person: messages.OperatorHolder, Interrupt: interrupt, IdleTimeout: v.srv.opts.ControlIdle,
	})
	if err != nil {
		return v.refuseErr(ctx, err)
	}
	v.mu.Lock()
	v.hold = hold
	v.mu.Unlock()
	return v.control(ctx, hold.State())
}

// refresh tells the page who holds the session's input now.
func (v *viewer) refresh(ctx context.Context) error {
	e, err := v.srv.opts.Source.Describe(ctx, v.id)
	if err != nil {
		return nil // the session went; the view ends by its watch
	}
	return v.control(ctx, e.Control)
}

// control tells the page who holds the session's input, when that is
// news: a new epoch, a new deadline, or that the hold is this page's. An older epoch than the page has
// (a Describe that was overtaken by a take) is dropped.
func (v *viewer) control(ctx context.Context, c messages.Control) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	you := v.hold != nil && v.hold.Epoch() == c.Epoch && c.Person
	// The badge loop may have told the page of its own take's epoch
	// before the take's answer set hold: you is news too.
	if s := v.sent; s != nil && (c.Epoch < s.Epoch || c.Epoch == s.Epoch && c.IdleDeadline.Equal(s.IdleDeadline) && you == v.sentYou) {
		return nil
	}
	m := map[string]any{"t": "control", "holder": c.Holder, "person": c.Person, "you": you, "epoch": c.Epoch}
	if c.Holder == "" {
		m["holder"] = messages.AgentHolder
	}
	if !c.Since.IsZero() {
		m["since"] = c.Since.UTC().Format(time.RFC3339)
	}
	if c.Person && !c.IdleDeadline.IsZero() {
		m["idleLeftMs"] = max(0, c.IdleDeadline.Sub(v.srv.opts.Now()).Milliseconds())
		m["idleTimeoutMs"] = c.IdleTimeout.Milliseconds()
	}
	if err := v.send(ctx, m); err != nil {
		return err
	}
	v.sent, v.sentYou = &c, you
	return nil
}

// refuseErr refuses an action with the session's reason: its error code
// in lower case (control_held, control_stale, no_session, ...).
func (v *viewer) refuseErr(ctx context.Context, err error) error {
	code := "failed"
	var me *messages.Error
	if errors.As(err, &me) {
		code = strings.ToLower(string(me.Code))
	}
	return v.refuse(ctx, code, err.Error())
}

// refuse answers an action the page may not take; the view goes on.
func (v *viewer) refuse(ctx context.Context, code, message string) error {
	return v.send(ctx, map[string]any{"t": "refused", "code": code, "message": message})
}
