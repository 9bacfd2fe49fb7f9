package actors

import (
	"context"
	"fmt"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// SendOp is one reserved send.
type SendOp struct {
	ticket uint64
	box    *replyBox
	done   chan struct{}
	res    messages.SendResult
	err    error
	// owner and session name the send's session in its requests; ask
	// sends one along the handle's route cache (Session.startSend makes
	// it), so the op needs nothing of the handle.
	owner   messages.Owner
	session messages.SessionID
	ask     func(context.Context, any) (any, error)
}

// askOp asks the op's session and waits for one reply of type R.
func askOp[R any](ctx context.Context, op *SendOp, msg any) (R, error) {
	var zero R
	m, err := op.ask(ctx, msg)
	if err != nil {
		return zero, err
	}
	r, ok := m.(R)
	if !ok {
		return zero, fmt.Errorf("ptyactor: unexpected reply %T", m)
	}
	return r, nil
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
	r, err := askOp[*protocol.ReadSendOutputReply](ctx, op, &protocol.ReadSendOutput{Owner: op.owner, Session: op.session, Ticket: op.ticket})
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
	r, err := askOp[*protocol.CancelSendReply](context.Background(), op, &protocol.CancelSend{Owner: op.owner, Session: op.session, Ticket: op.ticket})
	return err == nil && r.Accepted
}
