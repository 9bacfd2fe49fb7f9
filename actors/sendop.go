package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// SendOp is one reserved send.
type SendOp struct {
	h      *Session
	ticket uint64
	box    *replyBox
	done   chan struct{}
	res    messages.SendResult
	err    error
}

// startSend reserves the slot; the returned op's box receives the
// settlement, which the caller must consume (await, or Send directly).
func (h *Session) startSend(ctx context.Context, req messages.SendRequest) (*SendOp, error) {
	s, owner, id := h.svc, h.owner, h.ID()
	msg := &protocol.StartSend{Owner: owner, Session: id, Request: req, NotifySettled: true}
	pid := s.route(ctx, owner, id)
	for {
		box := newReplyBox(s.sys, 2)
		s.sys.Root.RequestWithCustomSender(pid, msg, box.PID)
		// The send actor tells the box directly when it settles, and it
		// may settle before the session's reservation reply arrives: keep a
		// settlement that overtook the reply.
		var early *protocol.SendSettled
		m, err := box.Wait(ctx)
		if st, ok := m.(*protocol.SendSettled); ok && err == nil {
			early = st
			m, err = box.Wait(ctx)
		}
		if err == nil {
			r, ok := m.(*protocol.StartSendReply)
			switch {
			case !ok:
				err = fmt.Errorf("ptyactor: unexpected reply %T", m)
			case r.Err != nil:
				err = r.Err
			default:
				op := &SendOp{h: h, ticket: r.Ticket, box: box, done: make(chan struct{})}
				if early != nil {
					box.C <- early // capacity 2: the reply was taken out
				}
				return op, nil
			}
		}
		box.Close()
		if errors.Is(err, errGone) && pid != s.pid {
			s.routes.Delete(routeKey{owner, id})
			pid = s.pid
			continue
		}
		if errors.Is(err, errGone) {
			err = messages.NoSession(id)
		}
		return nil, err
	}
}

// await collects the settlement. It ends when the send settles, which every
// send does (its deadline is always armed), or when the session stops.
func (op *SendOp) await() {
	m, err := op.box.Wait(context.Background())
	op.finish(m, err)
}

// finish records the settlement delivered to the op's box.
func (op *SendOp) finish(m any, err error) {
	defer close(op.done)
	defer op.box.Close()
	if err != nil {
		op.err = fmt.Errorf("%w: session stopped before the send settled", messages.ErrSessionClosing)
		return
	}
	st, ok := m.(*protocol.SendSettled)
	if !ok {
		op.err = fmt.Errorf("ptyactor: unexpected reply %T", m)
		return
	}
	op.res, op.err = st.Result, st.Err
}

// Done is closed when the send settled.
func (op *SendOp) Done() <-chan struct{} { return op.done }

// Ticket names the send in the message protocol.
func (op *SendOp) Ticket() uint64 { return op.ticket }

// Result waits for the settlement (or ctx) and returns it. A settled
// send returns its result even when ctx has ended too.
func (op *SendOp) Result(ctx context.Context) (messages.SendResult, error) {
	select {
	case <-op.done:
		// Checked alone first: with both ready, select would pick at
		// random and could report ctx's cause for a settled send.
		return op.res, op.err
	default:
	}
	select {
	case <-op.done:
		return op.res, op.err
	case <-ctx.Done():
		return messages.SendResult{}, context.Cause(ctx)
	}
}

// ReadOutput returns output produced since the previous call. Once the
// send settled, the rest is in the result's viewport.
func (op *SendOp) ReadOutput(ctx context.Context) (messages.SendRead, error) {
	r, err := askSession[*protocol.ReadSendOutputReply](ctx, op.h, &protocol.ReadSendOutput{Owner: op.h.owner, Session: op.h.ID(), Ticket: op.ticket})
	if err != nil {
		return messages.SendRead{}, err
	}
	return r.Read, r.Err
}

// Cancel requests cancellation: input not yet written is never written;
// otherwise a real SIGINT goes to the foreground group. It reports false once
// the send settled.
func (op *SendOp) Cancel() bool {
	select {
	case <-op.done:
		return false
	default:
	}
	r, err := askSession[*protocol.CancelSendReply](context.Background(), op.h, &protocol.CancelSend{Owner: op.h.owner, Session: op.h.ID(), Ticket: op.ticket})
	return err == nil && r.Accepted
}
