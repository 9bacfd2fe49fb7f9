package actors

import (
	"context"
	"fmt"

	"github.com/ptyactor/ptyactor/actors/internal/seam"

	"github.com/asynkron/protoactor-go/actor"
)

// replyBox is a tiny process that delivers replies into a channel, so the
// facade can wait on a reply and on the caller's context at once without a
// goroutine per call (protoactor futures block in Result and wake only one
// waiter). It accepts several messages: a send's reservation reply and its
// settlement both arrive here.
type replyBox struct {
	ch  chan any
	pid *actor.PID
	sys *actor.ActorSystem
}

func (p *replyBox) SendUserMessage(_ *actor.PID, m any) {
	select {
	case p.ch <- actor.UnwrapEnvelopeMessage(m):
	default:
		// More replies than expected: the protocol sends at most cap(ch).
	}
}
func (p *replyBox) SendSystemMessage(*actor.PID, any) {}
func (p *replyBox) Stop(*actor.PID)                   {}

func newReplyBox(sys *actor.ActorSystem, capacity int) *replyBox {
	b := &replyBox{ch: make(chan any, capacity), sys: sys}
	b.pid, _ = sys.ProcessRegistry.Add(b, "reply$"+sys.ProcessRegistry.NextId())
	return b
}

func (p *replyBox) close() { p.sys.ProcessRegistry.Remove(p.pid) }

// wait returns the next reply, or the caller's cause when ctx ends first.
func (p *replyBox) wait(ctx context.Context) (any, error) {
	select {
	case m := <-p.ch:
		if _, ok := m.(*actor.DeadLetterResponse); ok {
			return nil, errGone
		}
		return m, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// errGone: the addressed actor stopped before answering (its session or
// owner went away in between). Callers translate it to the right refusal.
var errGone = seam.ErrGone

// ask sends msg to pid and waits for one reply of type R.
func ask[R any](ctx context.Context, sys *actor.ActorSystem, pid *actor.PID, msg any) (R, error) {
	var zero R
	box := newReplyBox(sys, 1)
	defer box.close()
	sys.Root.RequestWithCustomSender(pid, msg, box.pid)
	m, err := box.wait(ctx)
	if err != nil {
		return zero, err
	}
	r, ok := m.(R)
	if !ok {
		return zero, fmt.Errorf("ptyactor: unexpected reply %T", m)
	}
	return r, nil
}
