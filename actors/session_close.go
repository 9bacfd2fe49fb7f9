package actors

import (
	"context"
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// The close fence: one close attempt at a time, off the mailbox; a Kill
// or the owner's close that finds one in flight joins it; a failure is
// not cached (the next close tries again).

// onKill: the agent's close, refused while a person holds the input.
func (s *sessionActor) onKill(ctx actor.Context, m *protocol.Kill) {
	if err := s.control.HeldErr(); err != nil && s.phase != actorkit.PhaseClosed {
		ctx.Respond(&protocol.KillReply{Err: err})
		return
	}
	s.beginClose(ctx, actorkit.KillReason(m), actorkit.CloseWaiter{PID: ctx.Sender(), Kill: true})
}

// onCloseSession: the owner's close (a disposal), never refused.
func (s *sessionActor) onCloseSession(ctx actor.Context, m *seam.CloseSession) {
	s.beginClose(ctx, m.Reason, actorkit.CloseWaiter{})
}

// beginClose starts a close, or joins the one in flight.
func (s *sessionActor) beginClose(ctx actor.Context, reason string, w actorkit.CloseWaiter) {
	if s.phase == actorkit.PhaseClosed {
		w.Reply(s.sys, false, messages.CloseReport{Status: s.status}, nil)
		return
	}
	if s.closeAttempt != 0 && len(s.closeWaiters) > 0 {
		w.Joined = true
		s.closeWaiters = append(s.closeWaiters, w)
		return
	}
	s.phase = actorkit.PhaseClosing
	s.closeReason = reason
	s.runQueuedStarts(ctx) // refused: the session is closing
	if s.sendPID != nil && !s.sendStartup {
		// Close stops readiness: what the teardown makes the shell print
		// (a prompt after a killed job) must not settle the send.
		ctx.Send(s.sendPID, &freeze{})
	}
	s.closeWaiters = append(s.closeWaiters, w)
	s.closeAttempt++
	attempt, bs, self, sys := s.closeAttempt, s.bs, s.self, s.sys
	if bs == nil {
		ctx.Send(self, &closeDone{attempt: attempt})
		return
	}
	grace := messages.Ms(s.cfg.DisposeGraceMs)
	go func() {
		// Bounded: teardown waits at most two graces per stage; the extra
		// margin only guards against a backend that ignores its own bound.
		cctx, cancel := context.WithTimeout(context.Background(), 6*grace+5*time.Second)
		defer cancel()
		report, err := bs.Close(cctx, reason)
		sys.Root.Send(self, &closeDone{attempt: attempt, report: report, err: err})
	}()
}

func (s *sessionActor) onCloseDone(ctx actor.Context, m *closeDone) {
	if m.attempt != s.closeAttempt {
		return
	}
	waiters := s.closeWaiters
	s.closeWaiters = nil
	if m.err != nil {
		s.closeFailed(ctx, m, waiters)
		return
	}
	if s.bs != nil {
		m.report.Status = s.bs.Status()
		s.status = m.report.Status
	}
	s.phase = actorkit.PhaseClosed
	if s.sendPID != nil && (s.last == nil || s.last.Ticket != s.sendTicket) && !s.sendStartup {
		status := s.status
		ctx.Send(s.sendPID, &forceSettle{reason: messages.WaitSessionExit, status: &status})
	}
	if s.startupErr != nil {
		ctx.Send(s.ownerPID, &seam.StartFailed{ID: s.id, Err: s.startupErr})
	} else {
		s.sys.EventStream.Publish(&protocol.EventSessionClosed{Owner: s.owner, Session: s.id, Reason: s.closeReason, Report: m.report})
		ctx.Send(s.ownerPID, &seam.Closed{ID: s.id, Report: m.report, Replies: actorkit.ClosedReplies(waiters, m.report)})
	}
	s.maybeFinish(ctx)
}

// closeFailed reports a close that left survivors (or failed otherwise):
// its callers hear, the owner keeps the failure for a retry.
func (s *sessionActor) closeFailed(ctx actor.Context, m *closeDone, waiters []actorkit.CloseWaiter) {
	var ce *messages.CleanupError
	if !errors.As(m.err, &ce) {
		m.err = &messages.CleanupError{Reason: s.closeReason, Survivors: m.report.Survivors, Err: m.err}
	}
	s.log.Warn().Err(m.err).Str("session", string(s.id)).Msg("close failed")
	s.sys.EventStream.Publish(&protocol.EventCleanupFailed{Owner: s.owner, Session: s.id, Err: m.err})
	for _, w := range waiters {
		w.Reply(s.sys, false, m.report, m.err)
	}
	if s.startupErr != nil {
		ctx.Send(s.ownerPID, &seam.StartFailed{ID: s.id, Err: &messages.BackendCleanupError{SpawnErr: s.startupErr, CleanupErr: m.err}, Kept: true})
		s.startupErr = nil
		return
	}
	ctx.Send(s.ownerPID, &seam.CloseFailed{ID: s.id, Err: m.err})
}
