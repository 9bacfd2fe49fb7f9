package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/takeover"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// Who holds a session's input is its take-over (actors/internal/takeover,
// the session actor's control): the agent by default, or a person who
// took it over. What is left here is the session's side: the requests it
// hands to its take-over, what the take-over asks of it (the
// takeover.Session methods below). The notes of a hand-back between the
// session and its send are in handback.go.

func (s *sessionActor) onTakeControl(ctx actor.Context, m *protocol.TakeControl) {
	s.control.Take(m, ctx.Sender())
}

func (s *sessionActor) onControlInput(ctx actor.Context, m *protocol.ControlInput) {
	s.control.Input(m, ctx.Sender())
}

func (s *sessionActor) onReturnControl(ctx actor.Context, m *protocol.ReturnControl) {
	s.control.Return(m, ctx.Sender())
}

func (s *sessionActor) onTakeOverFenced(_ actor.Context, m *takeOverFenced) {
	s.control.Fenced(m.ticket)
}

func (s *sessionActor) onPersonWritten(_ actor.Context, m *takeover.Written) { s.control.Wrote(m) }

func (s *sessionActor) onControlIdle(_ actor.Context, m *takeover.IdleCheck) { s.control.Idle(m) }

func (s *sessionActor) onHandbackBounced(_ actor.Context, m *handbackBounced) {
	s.control.Bounced(m.hb)
}

// Refusal implements takeover.Session: a closing session, or one whose
// shell exited, takes no person's input.
func (s *sessionActor) Refusal() error {
	switch {
	case s.phase.Closing():
		return messages.ErrSessionClosing
	case s.status.Exited:
		return messages.ErrSessionExited
	}
	return nil
}

// BackendSession implements takeover.Session.
func (s *sessionActor) BackendSession() backend.Session { return s.bs }

// InFlight implements takeover.Session: the send in the slot.
func (s *sessionActor) InFlight() takeover.Send {
	if s.sendPID == nil {
		return takeover.Send{}
	}
	return takeover.Send{Ticket: s.sendTicket, Agent: !s.sendStartup, Writes: !s.sendIsWait, Settled: s.sendSettled}
}

// FenceSend implements takeover.Session: the send answers
// takeOverFenced once it writes no more.
func (s *sessionActor) FenceSend(interrupt bool) {
	s.sys.Root.Send(s.sendPID, &takeOver{interrupt: interrupt})
}

// NoteHandback implements takeover.Session.
func (s *sessionActor) NoteHandback(hb *messages.Handback) {
	s.sys.Root.Send(s.sendPID, &handbackNote{hb: hb})
}

// takeoverClock is the session's clock as its take-over reads it.
type takeoverClock struct{ Clock }

func (c takeoverClock) AfterFunc(d time.Duration, f func()) takeover.Timer {
	return c.Clock.AfterFunc(d, f)
}
