// Package takeover is who holds a session's input: the agent by default,
// or a person who took it over (TakeControl). A Takeover belongs to one
// session actor and runs in its mailbox: every change moves the epoch on;
// a person's input (ControlInput) is written only under the epoch it was
// taken with, in order, one write at a time off the mailbox. While a
// person holds it, the agent's calls that would write or change the
// terminal are refused (HeldErr). A change of holder waits behind the
// fence until the old holder writes no more. When the input comes back
// (ReturnControl, or the idle timeout), what the people did is summed up
// (messages.Handback) for the agent's next result; lineEditor follows
// their keys into lines.
//
// It knows the session actor only through Session, so the session's
// send slot, close fence and backend stay the session's.
package takeover

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// Session is what a take-over asks of the session actor that holds it.
type Session interface {
	// Refusal is why the session takes no input now (closing, or its
	// shell exited); nil when it does.
	Refusal() error
	// BackendSession is the session's backend session.
	BackendSession() backend.Session
	// InFlight is the send in the session's one-send slot.
	InFlight() Send
	// FenceSend tells the agent's send in flight to write no more; it
	// answers (through the session) with Fenced(its ticket).
	FenceSend(interrupt bool)
	// NoteHandback hands hb to the agent's send in flight: its result
	// is the agent's next.
	NoteHandback(hb *messages.Handback)
}

// Send is the send in the session's slot, as a take-over sees it.
type Send struct {
	Ticket uint64
	// Agent: an agent's send (not the startup wait) is in the slot.
	Agent bool
	// Writes: it writes (it is not a wait).
	Writes bool
	// Settled: it settled; its write or SIGINT may still drain.
	Settled bool
}

// Clock is the take-over's time source (the session's).
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable pending call.
type Timer interface{ Stop() bool }

type (
	// Written (to the session's mailbox): a person's input was written
	// (or failed).
	Written struct {
		epoch  uint64
		data   []byte
		secret bool
		err    error
		sender *actor.PID
	}
	// IdleCheck (to the session's mailbox): the hold of epoch may have
	// run out of its idle time.
	IdleCheck struct{ epoch uint64 }
)

// Takeover is a session's control state: the holder, the person's
// input, the fence, the hold in progress and the summary the agent's
// next result carries.
type Takeover struct {
	id    messages.SessionID
	owner messages.Owner
	clock Clock
	self  *actor.PID
	sys   *actor.ActorSystem
	// session is the session actor this take-over belongs to.
	session Session

	state     messages.Control
	lastInput time.Time
	idle      Timer
	// hold is the people's hold in progress (from the first take until
	// the agent has the input again).
	hold *holdLog
	// pending is the summary the agent's next result carries.
	pending *messages.Handback
	// The person's input: one write in flight (cancel ends it when
	// control moves on), the rest queued in order.
	writing bool
	cancel  context.CancelFunc
	queue   []*protocol.ControlInput
	senders []*actor.PID
	fence
}

// New is the take-over of session id (owned by owner), whose actor is
// self on sys; the agent holds the input, at epoch 1.
func New(id messages.SessionID, owner messages.Owner, clock Clock, self *actor.PID, sys *actor.ActorSystem, session Session) *Takeover {
	return &Takeover{id: id, owner: owner, clock: clock, self: self, sys: sys, session: session,
		state: messages.Control{Holder: messages.AgentHolder, Since: clock.Now(), Epoch: 1}}
}

// State is who holds the input now.
func (c *Takeover) State() messages.Control { return c.state }

// HeldErr is the refusal of an agent's call while a person holds the
// input; nil while the agent does.
func (c *Takeover) HeldErr() error {
	if !c.state.Person {
		return nil
	}
	return messages.ControlHeld(c.id, c.state)
}

// ResizeErr is the refusal of a resize under control epoch (0: the
// agent's), nil when the caller may resize.
func (c *Takeover) ResizeErr(epoch uint64) error {
	switch {
	case epoch == 0 && c.state.Person:
		return c.HeldErr()
	case epoch != 0 && (!c.state.Person || epoch != c.state.Epoch):
		return messages.ControlStale(c.id, epoch, c.state)
	}
	return nil
}

// Take handles a person's TakeControl.
func (c *Takeover) Take(m *protocol.TakeControl, sender *actor.PID) {
	reply := func(r *protocol.ControlReply) { c.sys.Root.Send(sender, r) }
	req := m.Request
	if err := req.Validate(); err != nil {
		reply(&protocol.ControlReply{Err: err})
		return
	}
	if err := c.session.Refusal(); err != nil {
		reply(&protocol.ControlReply{Err: err})
		return
	}
	if _, ok := c.session.BackendSession().(backend.PersonWriter); !ok {
		reply(&protocol.ControlReply{Err: messages.InvalidArgument("this session's backend cannot take a person's input")})
		return
	}
	if c.deferControl(m, sender) {
		return
	}
	// The agent's send in flight settles now (taken_over) and writes
	// nothing more; the take completes once it says so. A wait goes on.
	// The SIGINT, when asked for, goes with the send that ran the
	// command, or straight to the foreground program.
	// A send settled while its write drains still writes: it is fenced
	// too.
	if send := c.session.InFlight(); send.Agent && send.Writes && c.fencedTicket != send.Ticket {
		c.fencedTicket, c.fencing = send.Ticket, true
		c.delegated = req.Interrupt && !send.Settled
		c.session.FenceSend(req.Interrupt)
		// First in line: what came after it waits for it.
		c.deferred = append([]deferredControl{{msg: m, sender: sender}}, c.deferred...)
		return
	}
	if req.Interrupt && !c.delegated {
		c.interruptForeground()
	}
	c.delegated = false
	reply(&protocol.ControlReply{Control: c.taken(req)})
}

// taken gives the input to req's person, past the fence.
func (c *Takeover) taken(req messages.TakeControlRequest) messages.Control {
	now := c.clock.Now()
	c.state.Epoch++
	c.state = messages.Control{Holder: req.Person, Person: true, Since: now, Epoch: c.state.Epoch,
		IdleTimeout: req.IdleTimeout, IdleDeadline: now.Add(req.IdleTimeout)}
	c.lastInput = now
	c.dropPersonInput()
	seq := c.noteControl("taken", req.Interrupt)
	if c.hold == nil {
		c.hold = &holdLog{since: now, fromSeq: seq, fromCursor: c.cursorNow()}
	}
	if n := len(c.hold.people); n == 0 || c.hold.people[n-1] != req.Person {
		c.hold.people = append(c.hold.people, req.Person)
	}
	c.armIdle(req.IdleTimeout)
	c.sys.EventStream.Publish(&protocol.EventControlChanged{Owner: c.owner, Session: c.id, Control: c.state})
	return c.state
}

// Return handles a person's ReturnControl.
func (c *Takeover) Return(m *protocol.ReturnControl, sender *actor.PID) {
	if !c.state.Person || m.Epoch != c.state.Epoch {
		c.sys.Root.Send(sender, &protocol.ReturnControlReply{Err: messages.ControlStale(c.id, m.Epoch, c.state)})
		return
	}
	if c.deferControl(m, sender) {
		return
	}
	c.sys.Root.Send(sender, &protocol.ReturnControlReply{Handback: c.handBack(messages.HandbackReturned)})
}

// Idle handles the idle check of a hold: past its idle time without
// input, the input goes back to the agent.
func (c *Takeover) Idle(m *IdleCheck) {
	if !c.state.Person || m.epoch != c.state.Epoch {
		return
	}
	if left := c.lastInput.Add(c.state.IdleTimeout).Sub(c.clock.Now()); left > 0 {
		c.armIdle(left)
		return
	}
	if c.deferControl(m, nil) {
		return
	}
	c.handBack(messages.HandbackIdle)
}

// armIdle (re)arms the idle check of the current hold after d.
func (c *Takeover) armIdle(d time.Duration) {
	if c.idle != nil {
		c.idle.Stop()
	}
	epoch, self, sys := c.state.Epoch, c.self, c.sys
	c.idle = c.clock.AfterFunc(d, func() { sys.Root.Send(self, &IdleCheck{epoch: epoch}) })
}

// Stop ends the take-over with its session: the idle check stops, a
// person's input and the requests behind the fence are refused.
func (c *Takeover) Stop() {
	if c.idle != nil {
		c.idle.Stop()
	}
	c.dropPersonInput()
	c.refuseDeferred(messages.ErrSessionClosing)
}
