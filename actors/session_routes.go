package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/internal/takeover"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// sessionRoutes is the session actor's messages, each to its handler.
var sessionRoutes = func() actorkit.Table[*sessionActor] {
	t := actorkit.Table[*sessionActor]{}
	// Lifecycle and startup.
	actorkit.On(t, (*sessionActor).onStarted)
	actorkit.On(t, (*sessionActor).onBackendSpawned)
	actorkit.On(t, (*sessionActor).onCancelSpawn)
	actorkit.On(t, (*sessionActor).onFactExited)
	actorkit.On(t, (*sessionActor).onStopping)
	// The one-send slot.
	actorkit.On(t, (*sessionActor).onStartSendMsg)
	actorkit.On(t, (*sessionActor).onAwait)
	actorkit.On(t, (*sessionActor).onReadSendOutput)
	actorkit.On(t, (*sessionActor).onCancelSend)
	actorkit.On(t, (*sessionActor).onSendFinished)
	actorkit.On(t, (*sessionActor).onSendDrained)
	actorkit.On(t, (*sessionActor).onTerminated)
	// Who holds the input (session_control.go), a person's secret
	// (secret.go).
	actorkit.On(t, (*sessionActor).onTakeControl)
	actorkit.On(t, (*sessionActor).onControlInput)
	actorkit.On(t, (*sessionActor).onReturnControl)
	actorkit.On(t, (*sessionActor).onTakeOverFenced)
	actorkit.On(t, (*sessionActor).onPersonWritten)
	actorkit.On(t, (*sessionActor).onControlIdle)
	actorkit.On(t, (*sessionActor).onHandbackBounced)
	actorkit.On(t, (*sessionActor).onEnterSecret)
	actorkit.On(t, (*sessionActor).onSecretWritten)
	actorkit.On(t, (*sessionActor).onSecretBounced)
	// The terminal.
	actorkit.On(t, (*sessionActor).onLookup)
	actorkit.On(t, (*sessionActor).onRead)
	actorkit.On(t, (*sessionActor).onDescribe)
	actorkit.On(t, (*sessionActor).onWatch)
	actorkit.On(t, (*sessionActor).onGetScreen)
	actorkit.On(t, (*sessionActor).onResize)
	actorkit.On(t, (*sessionActor).onMark)
	actorkit.On(t, (*sessionActor).onSignal)
	// The close (session_close.go).
	actorkit.On(t, (*sessionActor).onKill)
	actorkit.On(t, (*sessionActor).onCloseSession)
	actorkit.On(t, (*sessionActor).onCloseDone)
	return t
}()

func (s *sessionActor) Receive(ctx actor.Context) {
	if actorkit.RefuseStranger(ctx, s.owner, s.phase) {
		return
	}
	sessionRoutes.Dispatch(s, ctx)
}

func (s *sessionActor) onStarted(ctx actor.Context, _ *actor.Started) {
	s.self, s.ownerPID, s.sys = ctx.Self(), ctx.Parent(), ctx.ActorSystem()
	s.control = takeover.New(s.id, s.owner, takeoverClock{s.clock}, s.self, s.sys, s)
	// The facts actor exists before the backend starts: the pump
	// reports from the first byte, before Spawn returns.
	s.factsPID = ctx.Spawn(props(&factsActor{}))
	s.startBackend()
}

// onFactExited: the shell exited (from the facts actor, which also tells
// the current send).
func (s *sessionActor) onFactExited(ctx actor.Context, m *factExited) {
	s.status = m.status
	ctx.Send(s.ownerPID, &seam.StatusChanged{ID: s.id, Status: m.status})
	s.sys.EventStream.Publish(&protocol.EventSessionExited{Owner: s.owner, Session: s.id, Status: m.status})
}

// onSendFinished: a send settled (its actor's report, or HandleFailure's
// for a failed one).
func (s *sessionActor) onSendFinished(ctx actor.Context, m *sendFinished) {
	if !s.recordSettled(ctx, m) {
		return
	}
	if m.ticket == 1 && s.phase == actorkit.PhaseStarting {
		s.onStartupSettled(ctx, m)
		return
	}
	s.publishSettled(m)
	s.maybeFinish(ctx)
}

func (s *sessionActor) onStopping(_ actor.Context, _ *actor.Stopping) {
	if s.spawnCancel != nil {
		s.spawnCancel(nil)
	}
	s.control.Stop()
	for _, w := range s.queuedStarts {
		s.sys.Root.Send(w.sender, &protocol.StartSendReply{Err: messages.ErrSessionClosing})
	}
	s.queuedStarts = nil
	if s.sendPID != nil && !s.sendStartup {
		// The send stops with this actor: whoever waits for it must
		// still hear an answer.
		gone := &protocol.SendSettled{Session: s.id, Ticket: s.sendTicket, Result: messages.SendResult{Status: s.status},
			Err: fmt.Errorf("%w: the session actor stopped before the send settled", messages.ErrSessionClosing)}
		for _, p := range s.subscribers {
			s.sys.Root.Send(p, gone)
		}
	}
	if s.phase != actorkit.PhaseClosed {
		// Stopped without a close (a failure above us): the tree must
		// still go. The owner counts this teardown as activity until
		// seam.OrphanClosed arrives.
		bs, id, owner, sys := s.bs, s.id, s.ownerPID, s.sys
		s.phase = actorkit.PhaseClosed
		go func() {
			var err error
			if bs != nil {
				_, err = bs.Close(context.Background(), "PTY session actor stopped")
			}
			sys.Root.Send(owner, &seam.OrphanClosed{ID: id, Err: err})
		}()
	}
}

// HandleFailure supervises the send child: a panic settles that send with a
// transport error and stops the child; the session stays usable.
func (s *sessionActor) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	if child.Equal(s.factsPID) {
		// Its state (the newest facts) stays valid across a failed
		// message; the send waiting on a look falls back to its timers.
		s.log.Error().Str("session", string(s.id)).Interface("panic", reason).Msg("facts actor failed; resuming it")
		sup.ResumeChildren(child)
		return
	}
	s.log.Error().Str("session", string(s.id)).Interface("panic", reason).Msg("send actor failed")
	sup.StopChildren(child)
	if s.sendPID != nil && child.Equal(s.sendPID) {
		// Through the mailbox, so a startup send fails the spawn the usual
		// way; a duplicate of an already settled ticket is ignored there.
		s.endSend()
		s.sys.Root.Send(s.self, &sendFinished{
			notify: append([]*actor.PID(nil), s.subscribers...),
			ticket: s.sendTicket,
			result: messages.SendResult{Status: s.status},
			err:    fmt.Errorf("%w: send failed: %v", messages.ErrTransport, reason),
		})
	}
	// The request the send was handling is dropped with it. A waiter
	// (AwaitSend) hears the settlement above; a reader or canceller is
	// answered here, or it would wait for its own deadline (Cancel has
	// none).
	if _, msg, sender := actor.UnwrapEnvelope(message); sender != nil {
		switch msg.(type) {
		case *protocol.ReadSendOutput, *protocol.CancelSend:
			sys.Root.Send(sender, protocol.Refuse(msg, fmt.Errorf("%w: send failed: %v", messages.ErrTransport, reason)))
		}
	}
}

func (s *sessionActor) onLookup(ctx actor.Context, _ *protocol.LookupSession) {
	ctx.Respond(&protocol.LookupReply{PID: s.self})
}

func (s *sessionActor) onSecretBounced(_ actor.Context, _ *secretBounced) { s.secretEntered = true }

func (s *sessionActor) onRead(ctx actor.Context, m *protocol.Read) {
	var res messages.ReadResult
	var err error
	if c := m.Request.Cursor; c != nil {
		res, err = s.bs.ReadSince(*c)
	} else {
		var offset, count int
		if offset, count, err = m.Request.Resolve(); err == nil {
			res, err = s.bs.Read(offset, count)
		}
	}
	if err == nil {
		res.Handback = s.control.TakeHandback()
	}
	ctx.Respond(&protocol.ReadReply{Result: res, Err: err})
}

func (s *sessionActor) onDescribe(ctx actor.Context, _ *protocol.Describe) {
	snap := s.snapshot()
	if w, ok := s.bs.(backend.Watchable); ok {
		a := w.Activity()
		snap.Activity = &a
	}
	ctx.Respond(&protocol.DescribeReply{Snapshot: snap})
}

func (s *sessionActor) onWatch(ctx actor.Context, _ *protocol.WatchSession) {
	if w, ok := s.bs.(backend.Watchable); ok {
		ctx.Respond(&protocol.WatchReply{Source: w})
	} else {
		ctx.Respond(&protocol.WatchReply{Err: errNoStream})
	}
}

func (s *sessionActor) onGetScreen(ctx actor.Context, _ *protocol.GetScreen) {
	if t, ok := s.bs.(backend.Terminal); ok {
		ctx.Respond(&protocol.ScreenReply{Screen: t.Screen()})
	} else {
		ctx.Respond(&protocol.ScreenReply{Err: errNoTerminal})
	}
}

// onResize: while a person holds the input only they resize, under
// their hold's epoch.
func (s *sessionActor) onResize(ctx actor.Context, m *protocol.Resize) {
	t, ok := s.bs.(backend.Terminal)
	switch {
	case !ok:
		ctx.Respond(&protocol.ResizeReply{Err: errNoTerminal})
	case s.phase.Closing():
		ctx.Respond(&protocol.ResizeReply{Err: messages.ErrSessionClosing})
	default:
		err := s.control.ResizeErr(m.ControlEpoch)
		if err == nil {
			err = t.Resize(m.Rows, m.Cols)
		}
		ctx.Respond(&protocol.ResizeReply{Err: err})
	}
}

// onMark notes a caller's label in the session's stream.
func (s *sessionActor) onMark(ctx actor.Context, m *protocol.Mark) {
	r, ok := s.bs.(backend.Recorder)
	switch {
	case !ok:
		ctx.Respond(&protocol.MarkReply{Err: errNoStream})
	case s.phase.Closing():
		ctx.Respond(&protocol.MarkReply{Err: messages.ErrSessionClosing})
	default:
		if err := messages.CheckLabel("mark label", m.Label); err != nil {
			ctx.Respond(&protocol.MarkReply{Err: err})
			return
		}
		ctx.Respond(&protocol.MarkReply{Seq: r.Note(record.Event{Kind: record.KindMark, Data: m.Label, Source: record.SourceAgent})})
	}
}

func (s *sessionActor) onSignal(ctx actor.Context, m *protocol.SignalSession) {
	var err error
	switch {
	case !m.Signal.Valid():
		_, err = messages.ParseSignal(string(m.Signal)) // the error naming the closed set
	case s.phase.Closing():
		err = messages.ErrSessionClosing
	case s.status.Exited:
		err = messages.ErrSessionExited
	case s.control.State().Person:
		err = s.control.HeldErr()
	default:
		// Signal may wait a moment (a command forked but not yet exec'd
		// would lose the signal to the shell's handlers): off the mailbox.
		bs, sig, sender, sys := s.bs, m.Signal, ctx.Sender(), s.sys
		go func() {
			res, err := bs.Signal(sig)
			if r, ok := bs.(backend.Recorder); ok && err == nil && res.Delivered {
				r.Note(record.Event{Kind: record.KindSignal, Signal: &record.Signal{Name: string(sig), Target: res.TargetPgid, Source: record.SourceAgent}})
			}
			sys.Root.Send(sender, &protocol.SignalReply{Result: res, Err: err})
		}()
		return
	}
	ctx.Respond(&protocol.SignalReply{Err: err})
}

// errNoTerminal: the session's backend keeps no screen (backend.Terminal).
var errNoTerminal = messages.InvalidArgument("this session's backend has no terminal screen")

// errNoStream: the session's backend keeps no event stream
// (backend.Recorder).
var errNoStream = messages.InvalidArgument("this session's backend keeps no event stream")
