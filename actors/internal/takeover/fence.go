package takeover

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
)

// fence: a change of holder waits until no input of the old holder is
// being written (a person's write, or the agent's send in flight, which
// closes its gate and acknowledges: Fenced), so the stream shows every
// input before the change that ends its holder's turn. Control requests
// that arrive meanwhile wait in order in deferred.
type fence struct {
	fencing      bool
	replaying    bool   // runDeferred hands a deferred request on
	fencedTicket uint64 // the send already told of this take-over
	// delegated: that send sends the take's SIGINT (it ran the command).
	delegated bool
	deferred  []deferredControl
}

// deferredControl is a control request waiting for the fence.
type deferredControl struct {
	msg    any
	sender *actor.PID
}

// deferControl defers a control request while the fence is up (a write
// of the old holder in flight, or the agent's send not yet stopped), or
// while earlier ones wait; it reports whether it did. A person's write
// that may block (a program not reading) is abandoned: what it wrote
// stays, the rest is not written.
func (c *Takeover) deferControl(m any, sender *actor.PID) bool {
	if c.replaying || !c.writing && !c.fencing && len(c.deferred) == 0 {
		return false
	}
	if _, input := m.(*protocol.ControlInput); !input && c.cancel != nil {
		c.cancel()
	}
	c.deferred = append(c.deferred, deferredControl{msg: m, sender: sender})
	return true
}

// runDeferred handles the deferred control requests, in order, while
// the fence is down.
func (c *Takeover) runDeferred() {
	if c.replaying {
		return // the loop below goes on
	}
	c.replaying = true
	defer func() { c.replaying = false }()
	for len(c.deferred) > 0 && !c.writing && !c.fencing {
		d := c.deferred[0]
		c.deferred = c.deferred[1:]
		switch m := d.msg.(type) {
		case *protocol.TakeControl:
			c.Take(m, d.sender)
		case *protocol.ControlInput:
			c.Input(m, d.sender)
		case *protocol.ReturnControl:
			c.Return(m, d.sender)
		case *IdleCheck:
			c.Idle(m)
		}
	}
}

// Fenced: the send of ticket, in flight at a take-over, writes no more.
func (c *Takeover) Fenced(ticket uint64) {
	if c.fencing && ticket == c.fencedTicket {
		c.fencing = false
		c.runDeferred()
	}
}

// SendGone: the session's send left its slot; a send gone writes nothing
// more, so a take-over waiting for it goes on.
func (c *Takeover) SendGone() { c.Fenced(c.fencedTicket) }

// refuseDeferred answers the control requests still waiting for the
// fence when the session stops: nobody waits for a reply that cannot
// come.
func (c *Takeover) refuseDeferred(err error) {
	for _, d := range c.deferred {
		if r := protocol.Refuse(d.msg, err); r != nil && d.sender != nil {
			c.sys.Root.Send(d.sender, r)
		}
	}
	c.deferred = nil
}
