package wire

import (
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// Conversions of a person's hold on a session's input (messages.Control,
// messages.Handback) and its requests. Times travel as Unix nanoseconds,
// the zero time as 0; durations as nanoseconds.

// ControlTo encodes who holds a session's input.
func ControlTo(c messages.Control) *Control {
	return &Control{Holder: c.Holder, Person: c.Person, SinceUnixNs: unixNs(c.Since), Epoch: c.Epoch,
		IdleTimeoutNs: int64(c.IdleTimeout), IdleDeadlineUnixNs: unixNs(c.IdleDeadline)}
}

// ControlFrom decodes who holds a session's input; nil (a host that
// predates control) is the agent.
func ControlFrom(w *Control) messages.Control {
	if w == nil {
		return messages.Control{Holder: messages.AgentHolder}
	}
	return messages.Control{Holder: w.Holder, Person: w.Person, Since: fromUnixNs(w.SinceUnixNs), Epoch: w.Epoch,
		IdleTimeout: time.Duration(w.IdleTimeoutNs), IdleDeadline: fromUnixNs(w.IdleDeadlineUnixNs)}
}

// HandbackTo encodes what people did while they held the input; nil
// stays nil.
func HandbackTo(h *messages.Handback) *Handback {
	if h == nil {
		return nil
	}
	w := &Handback{
		People: h.People, Reason: h.Reason, SinceUnixNs: unixNs(h.Since), UntilUnixNs: unixNs(h.Until),
		FromSeq: h.FromSeq, ToSeq: h.ToSeq, FromCursor: h.FromCursor, ToCursor: h.ToCursor,
		ExitCodes: ints64(h.ExitCodes), HalfTyped: h.HalfTyped, Truncated: h.Truncated,
	}
	for _, l := range h.Lines {
		w.Lines = append(w.Lines, &TypedLine{Text: l.Text, Secret: l.Secret, Len: int64(l.Len)})
	}
	return w
}

// HandbackFrom decodes what people did while they held the input; nil
// stays nil.
func HandbackFrom(w *Handback) *messages.Handback {
	if w == nil {
		return nil
	}
	h := &messages.Handback{
		People: w.People, Reason: w.Reason, Since: fromUnixNs(w.SinceUnixNs), Until: fromUnixNs(w.UntilUnixNs),
		FromSeq: w.FromSeq, ToSeq: w.ToSeq, FromCursor: w.FromCursor, ToCursor: w.ToCursor,
		ExitCodes: ints(w.ExitCodes), HalfTyped: w.HalfTyped, Truncated: w.Truncated,
	}
	for _, l := range w.Lines {
		h.Lines = append(h.Lines, messages.TypedLine{Text: l.GetText(), Secret: l.GetSecret(), Len: clampInt(l.GetLen())})
	}
	return h
}

// TakeControlTo encodes a take-over of session.
func TakeControlTo(session string, r messages.TakeControlRequest) *TakeControl {
	return &TakeControl{Session: session, Person: r.Person, Interrupt: r.Interrupt, IdleTimeoutNs: int64(r.IdleTimeout)}
}

// TakeControlRequestFrom decodes a take-over; the session it names is
// w's Session. The host's session validates it.
func TakeControlRequestFrom(w *TakeControl) messages.TakeControlRequest {
	return messages.TakeControlRequest{Person: w.GetPerson(), Interrupt: w.GetInterrupt(), IdleTimeout: time.Duration(w.GetIdleTimeoutNs())}
}

func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNs(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
