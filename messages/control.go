package messages

import (
	"fmt"
	"time"
)

// Control is who holds a session's input: the agent (the default), or a
// person who took it over from a console. Every change of holder moves
// Epoch on, so input from a holder whose epoch is stale (an old page, a
// hold that moved on) is told apart and refused.
type Control struct {
	// Holder is AgentHolder or the person's label ("operator" for the
	// console's operator).
	Holder string
	// Person: Holder is a person; the agent's input is refused
	// (ErrControlHeld) until control comes back.
	Person bool
	// Since is when Holder took control.
	Since time.Time
	Epoch uint64
	// IdleTimeout is how long a person's hold lasts without their input;
	// IdleDeadline is when it ends as of their newest input.
	IdleTimeout  time.Duration
	IdleDeadline time.Time
}

// AgentHolder is Control.Holder while the agent holds the input.
const AgentHolder = "agent"

// OperatorHolder is the console's operator as a holder.
const OperatorHolder = "operator"

// DefaultControlIdle is how long a person's hold lasts without their
// input unless TakeControlRequest.IdleTimeout says.
const DefaultControlIdle = 10 * time.Minute

// MaxControlIdle bounds TakeControlRequest.IdleTimeout.
const MaxControlIdle = 24 * time.Hour

// TakeControlRequest asks for a session's input for a person.
type TakeControlRequest struct {
	// Person is the person's label (CheckLabel); OperatorHolder when empty.
	Person string
	// Interrupt sends the running command a SIGINT first; otherwise it
	// keeps running.
	Interrupt bool
	// IdleTimeout ends the hold after this long without the person's
	// input (DefaultControlIdle when zero; at most MaxControlIdle).
	IdleTimeout time.Duration
}

// Validate checks the request and fills its defaults.
func (r *TakeControlRequest) Validate() error {
	if r.Person == "" {
		r.Person = OperatorHolder
	}
	if r.Person == AgentHolder {
		return InvalidArgument("a person cannot be labelled %q", AgentHolder)
	}
	if err := CheckLabel("person", r.Person); err != nil {
		return err
	}
	switch {
	case r.IdleTimeout == 0:
		r.IdleTimeout = DefaultControlIdle
	case r.IdleTimeout < time.Second || r.IdleTimeout > MaxControlIdle:
		return InvalidArgument("idle timeout must be between 1s and %s, got %s", MaxControlIdle, r.IdleTimeout)
	}
	return nil
}

// Why control came back to the agent (Handback.Reason).
const (
	HandbackReturned = "returned" // the person handed it back
	HandbackIdle     = "idle"     // the person's idle timeout ran out
)

// Handback is what people did while they held a session's input, from
// the take to the hand-back: the agent's next result on the session
// (send, wait or read) carries it, once, so the model is not lost.
type Handback struct {
	// People are the holders, in the order they took control.
	People []string
	// Reason is HandbackReturned or HandbackIdle.
	Reason string
	// Since and Until bound the hold.
	Since, Until time.Time
	// FromSeq and ToSeq are the session's stream events at the take and
	// at the hand-back; FromCursor and ToCursor its transcript's line
	// cursors then (terminal_read from FromCursor shows what happened).
	FromSeq, ToSeq       uint64
	FromCursor, ToCursor uint64
	// Lines are the lines the people submitted, in order.
	Lines []TypedLine
	// ExitCodes are the statuses of the commands that ran meanwhile, as
	// the shell's prompt marker signed them, in order.
	ExitCodes []int
	// HalfTyped is a line left unsubmitted at the hand-back: it is
	// discarded before the agent's next send writes.
	HalfTyped string
	// Truncated: some of the hold's events had left the session's memory;
	// ExitCodes may miss the earliest.
	Truncated bool
}

// TypedLine is one line a person submitted: its text as typed (line
// editing applied, other keys left out), or, typed at a secret prompt,
// only its length.
type TypedLine struct {
	Text   string
	Secret bool
	Len    int
}

// ControlHeld is the refusal of an agent's call while a person holds the
// session's input; it names who and since when.
func ControlHeld(id SessionID, c Control) *Error {
	return Errorf(CodeControlHeld, "a person (%s) holds the input of PTY session %s since %s: the agent's input, resizes, signals and close wait until they hand it back (reads and waits work)",
		c.Holder, id, c.Since.UTC().Format(time.RFC3339))
}

// ControlStale is the refusal of a holder's input once control moved on.
func ControlStale(id SessionID, epoch uint64, now Control) *Error {
	return Errorf(CodeControlStale, "control of PTY session %s moved on (epoch %d, now %d, held by %s): this holder's input is refused",
		id, epoch, now.Epoch, now.Holder)
}

// String is the holder and since when, for a line of text.
func (c Control) String() string {
	if !c.Person {
		return AgentHolder
	}
	return fmt.Sprintf("%s since %s", c.Holder, c.Since.UTC().Format(time.RFC3339))
}
