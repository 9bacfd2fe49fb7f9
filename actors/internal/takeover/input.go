package takeover

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// Input handles a person's ControlInput: written under its epoch, after
// their earlier input.
func (c *Takeover) Input(m *protocol.ControlInput, sender *actor.PID) {
	reply := func(r *protocol.ControlInputReply) { c.sys.Root.Send(sender, r) }
	if (c.fencing || len(c.deferred) > 0) && c.deferControl(m, sender) {
		return // behind a change of holder
	}
	if !c.state.Person || m.Epoch != c.state.Epoch {
		reply(&protocol.ControlInputReply{Err: messages.ControlStale(c.id, m.Epoch, c.state)})
		return
	}
	if err := c.session.Refusal(); err != nil {
		reply(&protocol.ControlInputReply{Err: err})
		return
	}
	if len(m.Data) == 0 {
		reply(&protocol.ControlInputReply{})
		return
	}
	now := c.clock.Now()
	c.lastInput = now
	c.state.IdleDeadline = now.Add(c.state.IdleTimeout)
	c.queue = append(c.queue, m)
	c.senders = append(c.senders, sender)
	c.writePersonInput()
}

// writePersonInput writes the oldest queued input of the current hold,
// one write at a time, off the mailbox.
func (c *Takeover) writePersonInput() {
	if c.writing || len(c.queue) == 0 {
		return
	}
	if len(c.deferred) > 0 {
		// A change of holder waits: the queued input is now stale.
		c.dropPersonInput()
		return
	}
	m, sender := c.queue[0], c.senders[0]
	c.queue, c.senders = c.queue[1:], c.senders[1:]
	c.writing = true
	wctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	pw := c.session.BackendSession().(backend.PersonWriter)
	src, self, sys := c.personSource(), c.self, c.sys
	go func() {
		secret, err := pw.WriteAs(wctx, src, m.Data)
		sys.Root.Send(self, &Written{epoch: m.Epoch, data: m.Data, secret: secret, err: err, sender: sender})
	}()
}

// Wrote handles the end of a person's write: its caller hears, the next
// input is written, and a change of holder waiting for it goes on.
func (c *Takeover) Wrote(m *Written) {
	c.writing = false
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	if c.hold != nil && c.state.Person && m.epoch == c.state.Epoch {
		c.hold.typed(m.data, m.secret)
	}
	err := m.err
	switch {
	case errors.Is(err, context.Canceled):
		// Abandoned for a change of holder: the rest is not written.
		err = messages.ControlStale(c.id, m.epoch, c.state)
	case err != nil:
		err = fmt.Errorf("%w: a person's input: %w", messages.ErrTransport, err)
	}
	c.sys.Root.Send(m.sender, &protocol.ControlInputReply{Err: err})
	c.writePersonInput()
	c.runDeferred()
}

// dropPersonInput refuses the queued input of a hold that ended and
// abandons the one being written (what was written stays).
func (c *Takeover) dropPersonInput() {
	for i, m := range c.queue {
		c.sys.Root.Send(c.senders[i], &protocol.ControlInputReply{Err: messages.ControlStale(c.id, m.Epoch, c.state)})
	}
	c.queue, c.senders = nil, nil
	if c.cancel != nil {
		c.cancel()
	}
}

// interruptForeground sends SIGINT to a program running in the
// foreground (never to the shell at its prompt), off the mailbox.
func (c *Takeover) interruptForeground() {
	bs := c.session.BackendSession()
	if pgid, err := bs.Foreground(); err != nil || pgid == bs.PID() {
		return
	}
	src := c.personSource()
	go func() {
		res, err := bs.Signal(messages.SIGINT)
		if r, ok := bs.(backend.Recorder); ok && err == nil && res.Delivered {
			r.Note(record.Event{Kind: record.KindSignal, Signal: &record.Signal{Name: string(messages.SIGINT), Target: res.TargetPgid, Source: src}})
		}
	}()
}

// personSource is the record's source for the holder's input.
func (c *Takeover) personSource() string {
	if h := c.state.Holder; h != messages.OperatorHolder {
		return record.SourceHuman + h
	}
	return record.SourceOperator
}
