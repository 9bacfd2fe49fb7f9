// Package actorkit is what every ptyactor actor is built and asked with:
// the props it runs on (Props), a reply box that lets a caller wait on a
// reply and on its context at once (Box, Ask), the table that routes an
// actor's messages to its handlers (Table), and what every session actor
// routes alike, the local one and a remote host's proxy (session.go:
// RefuseStranger, Await, ReadOutput, Cancel, CloseWaiter). Package actors
// and the rooms beside it (actors/remote) both use it, so each spawns,
// asks and routes the same way.
package actorkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// ErrGone: the addressed actor stopped before answering (its session or
// owner went away in between). Callers translate it to the right refusal.
var ErrGone = errors.New("ptyactor: actor stopped before replying")

// Props builds the props of every ptyactor actor. They run on protoactor's
// synchronized dispatcher: a mailbox is processed in the goroutine that
// delivered the message instead of a fresh goroutine per wake-up. That is
// safe only because no Receive here ever blocks (blocking work runs in
// goroutines the actors own), and it removes a goroutine hand-off from
// every hop: the caller's goroutine carries a send to the write, and the
// output pump carries the prompt fact to the settlement.
func Props(a actor.Actor) *actor.Props {
	// 300 messages in a row before yielding (runtime.Gosched), as
	// protoactor's default dispatcher does.
	return actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithDispatcher(actor.NewSynchronizedDispatcher(300)))
}

// Box is a tiny process that delivers replies into a channel, so the
// facade can wait on a reply and on the caller's context at once without a
// goroutine per call (protoactor futures block in Result and wake only one
// waiter). It accepts several messages: a send's reservation reply and its
// settlement both arrive here.
type Box struct {
	// C carries the replies, at most cap(C) of them.
	C chan any
	// PID is the box's address: the sender of the request it waits on.
	PID *actor.PID
	sys *actor.ActorSystem
}

// SendUserMessage implements actor.Process.
func (p *Box) SendUserMessage(_ *actor.PID, m any) {
	select {
	case p.C <- actor.UnwrapEnvelopeMessage(m):
	default:
		// More replies than expected: the protocol sends at most cap(C).
	}
}

// SendSystemMessage implements actor.Process.
func (p *Box) SendSystemMessage(*actor.PID, any) {}

// Stop implements actor.Process.
func (p *Box) Stop(*actor.PID) {}

// NewBox registers a box on sys for up to capacity replies.
func NewBox(sys *actor.ActorSystem, capacity int) *Box {
	b := &Box{C: make(chan any, capacity), sys: sys}
	b.PID, _ = sys.ProcessRegistry.Add(b, "reply$"+sys.ProcessRegistry.NextId())
	return b
}

// Close removes the box from its system.
func (p *Box) Close() { p.sys.ProcessRegistry.Remove(p.PID) }

// Wait returns the next reply, or the caller's cause when ctx ends first;
// ErrGone when the addressed actor stopped before replying.
func (p *Box) Wait(ctx context.Context) (any, error) {
	select {
	case m := <-p.C:
		if _, ok := m.(*actor.DeadLetterResponse); ok {
			return nil, ErrGone
		}
		return m, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Ask sends msg to pid and waits for one reply of type R.
func Ask[R any](ctx context.Context, sys *actor.ActorSystem, pid *actor.PID, msg any) (R, error) {
	var zero R
	box := NewBox(sys, 1)
	defer box.Close()
	sys.Root.RequestWithCustomSender(pid, msg, box.PID)
	m, err := box.Wait(ctx)
	if err != nil {
		return zero, err
	}
	r, ok := m.(R)
	if !ok {
		return zero, fmt.Errorf("ptyactor: unexpected reply %T", m)
	}
	return r, nil
}
