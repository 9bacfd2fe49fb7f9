package actorkit

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// What every session actor routes alike, the local one (actors) and the
// proxy of a session on a host (actors/remote): who may ask it anything,
// the requests that name a send by its ticket, and the callers of its
// close. Each actor decides the rest itself.

// Phase is a session actor's phase.
type Phase int

const (
	PhaseStarting Phase = iota // its spawn or startup wait in progress; unpublished
	PhaseReady
	PhaseClosing // a close in flight, or failed and awaiting a retry
	PhaseClosed
)

// Closing reports a close in flight or done: the session takes no more
// input.
func (p Phase) Closing() bool { return p == PhaseClosing || p == PhaseClosed }

// RefuseStranger answers a session request that names another owner, or
// that arrives while the session is starting (unpublished), as one naming
// an unknown id; it reports whether it did. Requests may arrive straight
// from the facade's route cache, so the session authorizes them itself,
// and a stranger learns nothing an unknown id would not tell.
func RefuseStranger(ctx actor.Context, owner messages.Owner, p Phase) bool {
	msg := ctx.Message()
	if o, id, scoped := protocol.Target(msg); scoped && (o != owner || p == PhaseStarting) {
		ctx.Respond(protocol.Refuse(msg, messages.NoSession(id)))
		return true
	}
	return false
}

// Await answers an AwaitSend: with the last settled send's settlement,
// by subscribe for the send in flight (current: its ticket, 0 for none),
// or as an unknown send.
func Await(ctx actor.Context, id messages.SessionID, m *protocol.AwaitSend, last *protocol.SendSettled, current uint64, subscribe func()) {
	switch {
	case last != nil && m.Ticket == last.Ticket:
		ctx.Respond(last)
	case current != 0 && m.Ticket == current:
		subscribe()
	default:
		ctx.Respond(&protocol.SendSettled{Session: id, Ticket: m.Ticket, Err: protocol.UnknownSend(m.Ticket)})
	}
}

// ReadOutput answers a ReadSendOutput: the send in flight reads its own
// (forward), the last settled one has nothing more, another is unknown.
func ReadOutput(ctx actor.Context, m *protocol.ReadSendOutput, last *protocol.SendSettled, current uint64, forward func()) {
	switch {
	case current != 0 && m.Ticket == current:
		forward()
	case last != nil && m.Ticket == last.Ticket:
		ctx.Respond(&protocol.ReadSendOutputReply{Settled: true})
	default:
		ctx.Respond(&protocol.ReadSendOutputReply{Err: protocol.UnknownSend(m.Ticket)})
	}
}

// Cancel answers a CancelSend: only the send in flight can be cancelled
// (forward).
func Cancel(ctx actor.Context, m *protocol.CancelSend, current uint64, forward func()) {
	if current != 0 && m.Ticket == current {
		forward()
		return
	}
	ctx.Respond(&protocol.CancelSendReply{Accepted: false})
}

// KillReason is the close's reason a Kill gives ("model request" when it
// names none).
func KillReason(m *protocol.Kill) string {
	if m.Reason == "" {
		return "model request"
	}
	return m.Reason
}

// CloseWaiter is a caller of a session's close: a Kill (answered with a
// *protocol.KillReply) or the owner (answered by seam.Closed).
type CloseWaiter struct {
	PID    *actor.PID
	Joined bool // a Kill that found this close in flight
	Kill   bool // a Kill request; otherwise internal
}

// Reply answers a Kill caller.
func (w CloseWaiter) Reply(sys *actor.ActorSystem, closed bool, report messages.CloseReport, err error) {
	if w.PID == nil || !w.Kill {
		return
	}
	sys.Root.Send(w.PID, &protocol.KillReply{Closed: closed, Report: report, Err: err})
}

// ClosedReplies are the Kill callers' answers once the session closed,
// which the owner sends after it dropped the session (seam.Closed): the
// one that began the close closed it, the ones that joined did not.
func ClosedReplies(ws []CloseWaiter, report messages.CloseReport) []seam.CloseReply {
	var replies []seam.CloseReply
	for _, w := range ws {
		if w.Kill && w.PID != nil {
			replies = append(replies, seam.CloseReply{To: w.PID, Reply: &protocol.KillReply{Closed: !w.Joined, Report: report}})
		}
	}
	return replies
}
