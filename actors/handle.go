package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// Session is a handle on one published session, as os/exec's *Cmd is on a
// process, and the one way to act on a session from Go: it carries the
// owner and the id, so its calls take only what changes from call to call.
// Service.Spawn returns one; Service.Session makes one for an id learned
// elsewhere (a tool call). A handle holds no resources: dropping it leaves
// the session open, and the owner's disposal closes it like any other.
type Session struct {
	svc   *Service
	owner messages.Owner
	info  messages.SpawnResult
}

// Session returns a handle for a session id of owner without asking the
// runtime; a wrong or foreign id surfaces as ErrNoSession on first use.
func (s *Service) Session(owner messages.Owner, id messages.SessionID) *Session {
	return &Session{svc: s, owner: owner, info: messages.SpawnResult{Snapshot: messages.Snapshot{SessionID: id}}}
}

// ID names the session in tool calls and the message protocol.
func (h *Session) ID() messages.SessionID { return h.info.SessionID }

// Owner is the identity the session belongs to.
func (h *Session) Owner() messages.Owner { return h.owner }

// PID is the shell's process id (zero for a handle made by Service.Session).
func (h *Session) PID() int { return h.info.PID }

// Info is the session as it was published: its snapshot at that moment and
// the startup output (Motd). Status changes later; ask Describe for now.
func (h *Session) Info() messages.SpawnResult { return h.info }

// Describe returns the session's snapshot now (its current status, whether
// a secret prompt shows).
func (h *Session) Describe(ctx context.Context) (messages.Snapshot, error) {
	r, err := askSession[*protocol.DescribeReply](ctx, h, &protocol.Describe{Owner: h.owner, Session: h.ID()})
	if err != nil {
		return messages.Snapshot{}, err
	}
	return r.Snapshot, r.Err
}

// Send writes input and waits until the send settles. If ctx ends first the
// send is cancelled (SIGINT if the input was written), Send waits for it to
// settle, and returns that result together with context.Cause(ctx).
func (h *Session) Send(ctx context.Context, req messages.SendRequest) (messages.SendResult, error) {
	if ctx.Err() != nil {
		// Aborted before anything was reserved: nothing is written.
		return messages.SendResult{}, context.Cause(ctx)
	}
	op, err := h.startSend(context.WithoutCancel(ctx), req)
	if err != nil {
		return messages.SendResult{}, err
	}
	// Wait on the reply box itself: no goroutine between the settlement
	// and the caller.
	if ctx.Err() != nil {
		op.Cancel()
	}
	var m any
	select {
	case m = <-op.box.C:
	case <-ctx.Done():
		op.Cancel()
		m = <-op.box.C
	}
	op.finish(m, nil)
	if ctx.Err() != nil {
		return op.res, context.Cause(ctx)
	}
	return op.res, op.err
}

// StartSend reserves the session's send slot (SEND_ACTIVE while another
// send is unsettled; a settled send whose write or interrupt is still in
// flight is waited for) and starts writing. ctx bounds only the
// reservation; use the op's Cancel, or Send, to interrupt the send itself.
func (h *Session) StartSend(ctx context.Context, req messages.SendRequest) (*SendOp, error) {
	op, err := h.startSend(ctx, req)
	if err != nil {
		return nil, err
	}
	go op.await()
	return op, nil
}

// Wait waits on the session without writing: until the program reading the
// terminal waits for input, the shell's prompt returns (with its exit
// code), the shell exits, the policy's pattern appears in new output,
// silence (unless NoSilence), or the deadline, whichever comes first. It
// holds the session's one send slot like a send, and a prompt that
// returned since the previous send settled still counts. Cancelling ctx
// ends the wait (no SIGINT: nothing was written).
func (h *Session) Wait(ctx context.Context, policy messages.WaitPolicy) (messages.SendResult, error) {
	return h.Send(ctx, messages.SendRequest{Wait: policy})
}

// Screen returns what the terminal shows now.
func (h *Session) Screen(ctx context.Context) (messages.Screen, error) {
	r, err := askSession[*protocol.ScreenReply](ctx, h, &protocol.GetScreen{Owner: h.owner, Session: h.ID()})
	if err != nil {
		return messages.Screen{}, err
	}
	return r.Screen, r.Err
}

// Resize sets the terminal's size: the foreground program gets SIGWINCH
// and redraws; the screen follows.
func (h *Session) Resize(ctx context.Context, rows, cols int) error {
	r, err := askSession[*protocol.ResizeReply](ctx, h, &protocol.Resize{Owner: h.owner, Session: h.ID(), Rows: rows, Cols: cols})
	if err != nil {
		return err
	}
	return r.Err
}

// Read pages retained scrollback, newest last (reads work while the session
// closes).
func (h *Session) Read(ctx context.Context, req messages.ReadRequest) (messages.ReadResult, error) {
	r, err := askSession[*protocol.ReadReply](ctx, h, &protocol.Read{Owner: h.owner, Session: h.ID(), Request: req})
	if err != nil {
		return messages.ReadResult{}, err
	}
	return r.Result, r.Err
}

// Signal sends sig to the terminal's current foreground process group.
func (h *Session) Signal(ctx context.Context, sig messages.Signal) (messages.SignalResult, error) {
	r, err := askSession[*protocol.SignalReply](ctx, h, &protocol.SignalSession{Owner: h.owner, Session: h.ID(), Signal: sig})
	if err != nil {
		return messages.SignalResult{}, err
	}
	return r.Result, r.Err
}

// Mark puts label in the session's event stream, and so in its record (an
// agent marks "tests start"); it returns the mark's number there.
func (h *Session) Mark(ctx context.Context, label string) (uint64, error) {
	r, err := askSession[*protocol.MarkReply](ctx, h, &protocol.Mark{Owner: h.owner, Session: h.ID(), Label: label})
	if err != nil {
		return 0, err
	}
	return r.Seq, r.Err
}

// Close tears the session's process tree down and returns once it is
// quiet, with the leak report. A close already in flight is joined
// (CloseReport.Joined). A failed close returns *messages.CleanupError; the
// session stays listed and Close may be retried.
func (h *Session) Close(ctx context.Context, reason string) (messages.CloseReport, error) {
	r, err := askSession[*protocol.KillReply](ctx, h, &protocol.Kill{Owner: h.owner, Session: h.ID(), Reason: reason})
	if err != nil {
		return messages.CloseReport{}, err
	}
	if r.Err == nil {
		h.svc.routes.Delete(routeKey{h.owner, h.ID()})
	}
	r.Report.Joined = !r.Closed
	return r.Report, r.Err
}

// Subscribe delivers this session's lifecycle events (Event* types), in
// order, until the subscription is closed.
func (h *Session) Subscribe() *Subscription {
	return h.svc.subscribe(h.owner, h.ID())
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
				op := h.newSendOp(r.Ticket, box)
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

// newSendOp makes the op of the send ticket, its settlement delivered to
// box; it asks this session along the route cache.
func (h *Session) newSendOp(ticket uint64, box *replyBox) *SendOp {
	return &SendOp{ticket: ticket, box: box, done: make(chan struct{}), owner: h.owner, session: h.ID(),
		ask: func(ctx context.Context, msg any) (any, error) { return askSession[any](ctx, h, msg) }}
}

// askSession sends a session-scoped request along the route cache, falling
// back to the service when the cached actor has stopped.
func askSession[R any](ctx context.Context, h *Session, msg any) (R, error) {
	s, owner, id := h.svc, h.owner, h.ID()
	pid := s.route(ctx, owner, id)
	r, err := ask[R](ctx, s.sys, pid, msg)
	if errors.Is(err, errGone) && pid != s.pid {
		s.routes.Delete(routeKey{owner, id})
		r, err = ask[R](ctx, s.sys, s.pid, msg)
	}
	if errors.Is(err, errGone) {
		err = messages.NoSession(id)
	}
	return r, err
}
