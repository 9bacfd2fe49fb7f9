package actors

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/record"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

type sessionPhase int

const (
	phaseStarting sessionPhase = iota // backend spawn or startup wait in progress; unpublished
	phaseReady
	phaseClosing // close in flight, or failed and awaiting a retry
	phaseClosed
)

// sessionActor owns one terminal: the one-send reservation, the close fence,
// the status, and the backend session. While starting it is the pending
// spawn; once its startup settles it becomes the published session.
type sessionActor struct {
	id      messages.SessionID
	owner   messages.Owner
	spec    messages.SpawnSpec
	backend backend.Backend
	// spawnCancel ends the context the backend's Spawn runs under (the
	// session's own: cancellation reaches it as a seam.CancelSpawn message);
	// spawnErr is the cause once cancelled.
	spawnCancel context.CancelCauseFunc
	spawnErr    error
	cfg         messages.Config
	clock       Clock
	log         zerolog.Logger

	self, ownerPID *actor.PID
	sys            *actor.ActorSystem

	bs     backend.Session
	phase  sessionPhase
	status messages.SessionStatus

	// factsPID holds the session's readiness facts and runs the exact
	// tier's looks; the backend reports to it, sends subscribe to it.
	factsPID *actor.PID

	// The one-send slot. A send occupies it from reservation until its
	// actor stops (settled and drained).
	sendPID     *actor.PID
	sendTicket  uint64
	sendStartup bool
	sendIsWait  bool // the current send writes nothing (a wait)
	sendSettled bool // the current send settled; its write or SIGINT is still in flight
	// queuedStarts wait for a settled send to drain: the slot is only
	// technically busy (a late write or signal must not reach the next
	// send), so a caller is not told SEND_ACTIVE for it.
	queuedStarts []queuedStart
	subscribers  []*actor.PID // waiters handed to the current send (told by the session only if it fails)
	events       *sessionEvents
	nextTicket   uint64
	last         *protocol.SendSettled // the most recent settled send
	secretPrompt bool                  // it settled at a secret prompt, and no send started since
	control      sessionControl
	// secretEntered: a person entered a secret since the agent's last
	// result (the next one says so).
	secretEntered bool

	// Close fence: one attempt at a time; failures are not cached.
	closeAttempt uint64
	closeReason  string
	closeWaiters []closeWaiter
	startupErr   error // set when the close is the rollback of a failed startup
	finishing    bool  // the poison pill is on its way
}

type queuedStart struct {
	msg    *protocol.StartSend
	sender *actor.PID
}

type closeWaiter struct {
	pid    *actor.PID
	joined bool // a Kill that found this close in flight
	kill   bool // a Kill request (reply *KillReply); otherwise internal
}

func (s *sessionActor) Receive(ctx actor.Context) {
	msg := ctx.Message()
	if r, scoped := msg.(protocol.SessionRequest); scoped {
		if o, id := r.Target(); o != s.owner || s.phase == phaseStarting {
			// Requests may arrive straight from the facade's route cache,
			// so the session authorizes them itself; a stranger's request
			// gets the same answer as an unknown id.
			ctx.Respond(r.Refuse(messages.NoSession(id)))
			return
		}
	}
	switch m := msg.(type) {
	case *actor.Started:
		s.self, s.ownerPID, s.sys = ctx.Self(), ctx.Parent(), ctx.ActorSystem()
		s.initControl()
		// The facts actor exists before the backend starts: the pump
		// reports from the first byte, before Spawn returns.
		s.factsPID = ctx.Spawn(props(&factsActor{}))
		s.startBackend()
	case *backendSpawned:
		s.onBackendSpawned(ctx, m)
	case *seam.CancelSpawn:
		if s.phase == phaseStarting && s.spawnErr == nil {
			s.spawnErr = m.Cause
			s.spawnCancel(m.Cause)
			if s.sendPID != nil {
				ctx.Send(s.sendPID, &forceSettle{reason: messages.WaitTimeout})
			}
		}

	case *factExited:
		// From the facts actor, which also tells the current send.
		s.status = m.status
		ctx.Send(s.ownerPID, &seam.StatusChanged{ID: s.id, Status: m.status})
		s.sys.EventStream.Publish(&protocol.EventSessionExited{Owner: s.owner, Session: s.id, Status: m.status})

	case *protocol.StartSend:
		s.onStartSend(ctx, m, ctx.Sender())
	case *protocol.AwaitSend:
		s.onAwait(ctx, m)
	case *protocol.LookupSession:
		ctx.Respond(&protocol.LookupReply{PID: s.self})
	case *protocol.ReadSendOutput:
		switch {
		case s.sendPID != nil && m.Ticket == s.sendTicket:
			ctx.Forward(s.sendPID)
		case s.last != nil && m.Ticket == s.last.Ticket:
			ctx.Respond(&protocol.ReadSendOutputReply{Settled: true})
		default:
			ctx.Respond(&protocol.ReadSendOutputReply{Err: protocol.UnknownSend(m.Ticket)})
		}
	case *protocol.CancelSend:
		if s.sendPID != nil && m.Ticket == s.sendTicket {
			ctx.Forward(s.sendPID)
		} else {
			ctx.Respond(&protocol.CancelSendReply{Accepted: false})
		}
	case *sendFinished:
		s.onSendFinished(ctx, m)
	case *sendDrained:
		if s.sendPID != nil && m.ticket == s.sendTicket {
			s.releaseSlot(ctx)
			s.runQueuedStarts(ctx)
			s.maybeFinish(ctx)
		}
	case *actor.Terminated:
		// A send actor that failed (stopped by HandleFailure).
		if s.sendPID != nil && m.Who.Equal(s.sendPID) {
			s.sendPID = nil
			s.releaseSlot(ctx)
			s.runQueuedStarts(ctx)
			s.maybeFinish(ctx)
		}

	case *protocol.TakeControl:
		s.onTakeControl(m, ctx.Sender())
	case *protocol.ControlInput:
		s.onControlInput(m, ctx.Sender())
	case *protocol.ReturnControl:
		s.onReturnControl(m, ctx.Sender())
	case *takeOverFenced:
		s.onTakeOverFenced(m.ticket)
	case *protocol.EnterSecret:
		s.onEnterSecret(m, ctx.Sender())
	case *secretWritten:
		s.onSecretWritten(m)
	case *secretBounced:
		s.secretEntered = true
	case *personWritten:
		s.onPersonWritten(m)
	case *controlIdle:
		s.onControlIdle(m)
	case *handbackBounced:
		s.control.pending = joinPending(s.control.pending, m.hb)

	case *protocol.Read:
		s.onRead(ctx, m)
	case *protocol.Describe:
		snap := s.snapshot()
		if w, ok := s.bs.(backend.Watchable); ok {
			a := w.Activity()
			snap.Activity = &a
		}
		ctx.Respond(&protocol.DescribeReply{Snapshot: snap})
	case *protocol.WatchSession:
		if w, ok := s.bs.(backend.Watchable); ok {
			ctx.Respond(&protocol.WatchReply{Source: w})
		} else {
			ctx.Respond(&protocol.WatchReply{Err: errNoStream})
		}
	case *protocol.GetScreen:
		if t, ok := s.bs.(backend.Terminal); ok {
			ctx.Respond(&protocol.ScreenReply{Screen: t.Screen()})
		} else {
			ctx.Respond(&protocol.ScreenReply{Err: errNoTerminal})
		}
	case *protocol.Resize:
		switch t, ok := s.bs.(backend.Terminal); {
		case !ok:
			ctx.Respond(&protocol.ResizeReply{Err: errNoTerminal})
		case s.phase == phaseClosing || s.phase == phaseClosed:
			ctx.Respond(&protocol.ResizeReply{Err: messages.ErrSessionClosing})
		case m.ControlEpoch == 0 && s.control.state.Person:
			ctx.Respond(&protocol.ResizeReply{Err: s.heldErr()})
		case m.ControlEpoch != 0 && (!s.control.state.Person || m.ControlEpoch != s.control.state.Epoch):
			ctx.Respond(&protocol.ResizeReply{Err: messages.ControlStale(s.id, m.ControlEpoch, s.control.state)})
		default:
			ctx.Respond(&protocol.ResizeReply{Err: t.Resize(m.Rows, m.Cols)})
		}
	case *protocol.Mark:
		ctx.Respond(s.mark(m))
	case *protocol.SignalSession:
		s.onSignal(ctx, m)
	case *protocol.Kill:
		if err := s.heldErr(); err != nil && s.phase != phaseClosed {
			ctx.Respond(&protocol.KillReply{Err: err})
			return
		}
		reason := m.Reason
		if reason == "" {
			reason = "model request"
		}
		s.beginClose(ctx, reason, closeWaiter{pid: ctx.Sender(), kill: true})
	case *seam.CloseSession:
		s.beginClose(ctx, m.Reason, closeWaiter{})
	case *closeDone:
		s.onCloseDone(ctx, m)

	case *actor.Stopping:
		if s.spawnCancel != nil {
			s.spawnCancel(nil)
		}
		if s.control.idle != nil {
			s.control.idle.Stop()
		}
		s.dropPersonInput()
		s.refuseDeferredControl(messages.ErrSessionClosing)
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
		if s.phase != phaseClosed {
			// Stopped without a close (a failure above us): the tree must
			// still go. The owner counts this teardown as activity until
			// seam.OrphanClosed arrives.
			bs, id, owner, sys := s.bs, s.id, s.ownerPID, s.sys
			s.phase = phaseClosed
			go func() {
				var err error
				if bs != nil {
					_, err = bs.Close(context.Background(), "PTY session actor stopped")
				}
				sys.Root.Send(owner, &seam.OrphanClosed{ID: id, Err: err})
			}()
		}
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

func (s *sessionActor) startBackend() {
	self, sys := s.self, s.sys
	bctx, cancel := context.WithCancelCause(context.Background())
	s.spawnCancel = cancel
	events := &sessionEvents{sys: sys, facts: s.factsPID}
	spec, cfg, backend, ctx := s.spec, s.cfg, s.backend, bctx
	go func() {
		bs, err := backend.Spawn(ctx, spec, cfg, events)
		sys.Root.Send(self, &backendSpawned{bs: bs, err: err})
	}()
}

func (s *sessionActor) onBackendSpawned(ctx actor.Context, m *backendSpawned) {
	if m.err != nil {
		ctx.Send(s.ownerPID, &seam.StartFailed{ID: s.id, Err: m.err})
		s.phase = phaseClosed
		s.finishing = true
		ctx.Poison(s.self)
		return
	}
	s.bs = m.bs
	if pr, ok := m.bs.(backend.StdinProber); ok {
		ctx.Send(s.factsPID, &attachProber{prober: pr})
	}
	// The startup wait is a send with nothing to write: marker, silence
	// after some output, or the deadline.
	s.spawnSend(ctx, &sendActor{startup: true}, nil, true)
	if s.spawnErr != nil {
		ctx.Send(s.sendPID, &forceSettle{reason: messages.WaitTimeout})
	}
}

func (s *sessionActor) spawnSend(ctx actor.Context, a *sendActor, notify *actor.PID, startup bool) uint64 {
	s.nextTicket++
	a.ticket, a.session = s.nextTicket, s.id
	a.bs, a.cfg, a.clock = s.bs, s.cfg, s.clock
	if a.started.IsZero() {
		a.started = s.clock.Now()
	}
	a.log = s.log
	a.facts, a.ev.status = s.factsPID, s.status
	_, a.exact = s.bs.(backend.StdinProber)
	s.sendTicket, s.sendStartup, s.sendIsWait = a.ticket, startup, !startup && a.isWait()
	if !startup {
		// The agent's first result after people held the input says
		// what they did.
		a.handback = s.takeHandback()
		a.secretEntered, s.secretEntered = s.secretEntered, false
	}
	s.subscribers = nil
	if notify != nil {
		s.subscribers = []*actor.PID{notify}
		a.subscribers = []*actor.PID{notify}
	}
	// Its Started runs here, inline (synchronized dispatcher): the send
	// subscribes to the facts, begins its epoch and writes before the
	// reservation is answered.
	s.sendPID = ctx.Spawn(props(a))
	return a.ticket
}

// releaseSlot frees the one-send slot and retires its actor with a poison
// pill: requests already forwarded to it are still answered, and nothing is
// forwarded to it afterwards.
func (s *sessionActor) releaseSlot(ctx actor.Context) {
	if s.sendPID != nil {
		ctx.Poison(s.sendPID)
	}
	s.sendPID, s.subscribers, s.sendSettled = nil, nil, false
	// A send gone writes nothing more: a take-over waiting for it goes on.
	s.onTakeOverFenced(s.control.fencedTicket)
}

func (s *sessionActor) onStartSend(ctx actor.Context, m *protocol.StartSend, sender *actor.PID) {
	var err error
	switch {
	case s.phase == phaseClosing || s.phase == phaseClosed:
		err = messages.ErrSessionClosing
	case s.status.Exited:
		err = messages.ErrSessionExited
	case s.sendPID != nil && s.sendSettled && !s.sendStartup:
		// Settled, draining its write or interrupt: answer once drained.
		s.queuedStarts = append(s.queuedStarts, queuedStart{msg: m, sender: sender})
		return
	case s.control.state.Person && !protocol.IsWait(m.Request):
		err = s.heldErr()
	case s.sendPID != nil:
		err = messages.Errorf(messages.CodeSendActive, "PTY session %s already has an active send", s.id)
	}
	if err != nil {
		ctx.Send(sender, &protocol.StartSendReply{Err: err})
		return
	}
	var notify *actor.PID
	if m.NotifySettled {
		notify = sender
	}
	if err := m.Request.Validate(); err != nil {
		ctx.Send(sender, &protocol.StartSendReply{Err: err})
		return
	}
	// Elapsed counts from the reservation, which includes the inline
	// write: the program may start on its input before the actor exists.
	for _, k := range m.Request.Keys {
		if _, err := backend.EncodeKey(k, false); err != nil {
			ctx.Send(sender, &protocol.StartSendReply{Err: err})
			return
		}
	}
	pattern, perr := compileWait(m.Request.Wait)
	if perr != nil {
		ctx.Send(sender, &protocol.StartSendReply{Err: perr})
		return
	}
	a := &sendActor{req: m.Request, pattern: pattern, started: s.clock.Now()}
	s.secretPrompt = false
	// A wait without the caller's cursor shows what the backend collected
	// from where the previous send's output ended (Resume).
	a.since = m.Request.Wait.Since
	ticket := s.spawnSend(ctx, a, notify, false)
	ctx.Send(sender, &protocol.StartSendReply{Ticket: ticket})
}

// runQueuedStarts answers the starts that waited for a draining send, in
// order, once the slot is free or the session can no longer send: the
// first takes the slot, the rest find it active.
func (s *sessionActor) runQueuedStarts(ctx actor.Context) {
	if s.sendPID != nil && s.sendSettled && s.phase != phaseClosing && s.phase != phaseClosed {
		return
	}
	q := s.queuedStarts
	s.queuedStarts = nil
	for _, w := range q {
		s.onStartSend(ctx, w.msg, w.sender)
	}
}

func (s *sessionActor) onAwait(ctx actor.Context, m *protocol.AwaitSend) {
	switch {
	case s.last != nil && m.Ticket == s.last.Ticket:
		ctx.Respond(s.last)
	case s.sendPID != nil && m.Ticket == s.sendTicket:
		s.subscribers = append(s.subscribers, ctx.Sender())
		ctx.Forward(s.sendPID)
	default:
		ctx.Respond(&protocol.SendSettled{Session: s.id, Ticket: m.Ticket, Err: protocol.UnknownSend(m.Ticket)})
	}
}

func (s *sessionActor) onSendFinished(ctx actor.Context, m *sendFinished) {
	if s.last != nil && m.ticket <= s.last.Ticket {
		return // a failed send's duplicate report
	}
	settled := &protocol.SendSettled{Session: s.id, Ticket: m.ticket, Result: m.result, Err: m.err}
	s.last = settled
	s.secretPrompt = m.result.Secret
	current := s.sendPID != nil && m.ticket == s.sendTicket
	for _, p := range m.notify {
		s.sys.Root.Send(p, settled)
	}
	if current && !m.draining {
		// Nothing in flight: the slot is free now.
		s.releaseSlot(ctx)
	} else if current {
		s.sendSettled = true
	}
	if m.ticket == 1 && s.phase == phaseStarting {
		s.onStartupSettled(ctx, m)
		return
	}
	r := m.result
	s.sys.EventStream.Publish(&protocol.EventSendSettled{
		Owner: s.owner, Session: s.id, Ticket: m.ticket, WaitReason: r.WaitReason, Cause: r.Cause,
		ExitCode: r.ExitCode, Reader: r.Reader, Secret: r.Secret, Cursor: r.Cursor, Seq: r.Seq, Err: m.err,
	})
	s.maybeFinish(ctx)
}

func (s *sessionActor) onStartupSettled(ctx actor.Context, m *sendFinished) {
	var err error
	switch {
	case s.spawnErr != nil:
		err = s.spawnErr
	case m.err != nil:
		err = m.err
	case m.result.WaitReason == messages.WaitSessionExit:
		err = startupExited(m.result)
	case m.result.WaitReason == messages.WaitTimeout:
		err = messages.ErrStartupTimeout
	}
	if err != nil {
		s.startupErr = err
		s.beginClose(ctx, "PTY startup failed", closeWaiter{})
		return
	}
	s.phase = phaseReady
	// Started: the backend no longer needs its start context.
	s.spawnCancel(nil)
	ctx.Send(s.ownerPID, &seam.Started{ID: s.id, Result: messages.SpawnResult{
		Snapshot: s.snapshot(),
		Motd:     m.result.Viewport,
	}})
}

// startupExited keeps what the shell (or a wrapper such as bwrap, which
// complains on the terminal) said before it exited: it is usually the
// reason. The text still begins with the reference's message.
func startupExited(r messages.SendResult) error {
	const keep = 1024
	out := strings.TrimSpace(r.Viewport)
	if out == "" {
		return fmt.Errorf("%w (%s)", messages.ErrStartupExited, r.Status)
	}
	if len(out) > keep {
		out = "…" + out[textcut.Tail(out, keep):]
	}
	return fmt.Errorf("%w (%s); its output: %q", messages.ErrStartupExited, r.Status, out)
}

func (s *sessionActor) snapshot() messages.Snapshot {
	snap := messages.Snapshot{SessionID: s.id, Name: s.spec.Name, Type: s.spec.Type, Status: s.status, SecretPrompt: s.secretPrompt, Control: s.control.state}
	if s.bs != nil {
		snap.PID = s.bs.PID()
	}
	return snap
}

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
		res.Handback = s.takeHandback()
	}
	ctx.Respond(&protocol.ReadReply{Result: res, Err: err})
}

func (s *sessionActor) onSignal(ctx actor.Context, m *protocol.SignalSession) {
	var (
		res messages.SignalResult
		err error
	)
	switch {
	case !m.Signal.Valid():
		_, err = messages.ParseSignal(string(m.Signal)) // the error naming the closed set
	case s.phase == phaseClosing || s.phase == phaseClosed:
		err = messages.ErrSessionClosing
	case s.status.Exited:
		err = messages.ErrSessionExited
	case s.control.state.Person:
		err = s.heldErr()
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
	ctx.Respond(&protocol.SignalReply{Result: res, Err: err})
}

// mark notes a caller's label in the session's stream.
func (s *sessionActor) mark(m *protocol.Mark) *protocol.MarkReply {
	r, ok := s.bs.(backend.Recorder)
	switch {
	case !ok:
		return &protocol.MarkReply{Err: errNoStream}
	case s.phase == phaseClosing || s.phase == phaseClosed:
		return &protocol.MarkReply{Err: messages.ErrSessionClosing}
	}
	if err := messages.CheckLabel("mark label", m.Label); err != nil {
		return &protocol.MarkReply{Err: err}
	}
	return &protocol.MarkReply{Seq: r.Note(record.Event{Kind: record.KindMark, Data: m.Label, Source: record.SourceAgent})}
}

// beginClose starts a close, or joins the one in flight.
func (s *sessionActor) beginClose(ctx actor.Context, reason string, w closeWaiter) {
	if s.phase == phaseClosed {
		s.replyClose(w, false, messages.CloseReport{Status: s.status}, nil)
		return
	}
	if s.closeAttempt != 0 && s.closeInFlight() {
		w.joined = true
		s.closeWaiters = append(s.closeWaiters, w)
		return
	}
	s.phase = phaseClosing
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

func (s *sessionActor) closeInFlight() bool { return len(s.closeWaiters) > 0 }

func (s *sessionActor) onCloseDone(ctx actor.Context, m *closeDone) {
	if m.attempt != s.closeAttempt {
		return
	}
	waiters := s.closeWaiters
	s.closeWaiters = nil
	if m.err != nil {
		var ce *messages.CleanupError
		if !errors.As(m.err, &ce) {
			m.err = &messages.CleanupError{Reason: s.closeReason, Survivors: m.report.Survivors, Err: m.err}
		}
		s.log.Warn().Err(m.err).Str("session", string(s.id)).Msg("close failed")
		s.sys.EventStream.Publish(&protocol.EventCleanupFailed{Owner: s.owner, Session: s.id, Err: m.err})
		for _, w := range waiters {
			s.replyClose(w, false, m.report, m.err)
		}
		if s.startupErr != nil {
			ctx.Send(s.ownerPID, &seam.StartFailed{ID: s.id, Err: &messages.BackendCleanupError{SpawnErr: s.startupErr, CleanupErr: m.err}, Kept: true})
			s.startupErr = nil
			return
		}
		ctx.Send(s.ownerPID, &seam.CloseFailed{ID: s.id, Err: m.err})
		return
	}
	if s.bs != nil {
		m.report.Status = s.bs.Status()
		s.status = m.report.Status
	}
	s.phase = phaseClosed
	if s.sendPID != nil && (s.last == nil || s.last.Ticket != s.sendTicket) && !s.sendStartup {
		status := s.status
		ctx.Send(s.sendPID, &forceSettle{reason: messages.WaitSessionExit, status: &status})
	}
	if s.startupErr != nil {
		ctx.Send(s.ownerPID, &seam.StartFailed{ID: s.id, Err: s.startupErr})
	} else {
		s.sys.EventStream.Publish(&protocol.EventSessionClosed{Owner: s.owner, Session: s.id, Reason: s.closeReason, Report: m.report})
		var replies []seam.CloseReply
		for _, w := range waiters {
			if w.kill && w.pid != nil {
				replies = append(replies, seam.CloseReply{To: w.pid, Reply: &protocol.KillReply{Closed: !w.joined, Report: m.report}})
			}
		}
		ctx.Send(s.ownerPID, &seam.Closed{ID: s.id, Report: m.report, Replies: replies})
	}
	s.maybeFinish(ctx)
}

// maybeFinish retires a closed session once its send settled and drained.
// A poison pill, not Stop: requests the owner forwarded before it dropped
// the session are still answered (as closing).
func (s *sessionActor) maybeFinish(ctx actor.Context) {
	if s.phase == phaseClosed && s.sendPID == nil && !s.finishing {
		s.finishing = true
		ctx.Poison(s.self)
	}
}

func (s *sessionActor) replyClose(w closeWaiter, closed bool, report messages.CloseReport, err error) {
	if w.pid == nil || !w.kill {
		return
	}
	s.sys.Root.Send(w.pid, &protocol.KillReply{Closed: closed, Report: report, Err: err})
}

// endSend stops the failed send's collection. The backend may be what
// failed (a panic in the very call the send made at its settlement): a
// second panic here must not take the session down with its send.
func (s *sessionActor) endSend() {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Str("session", string(s.id)).Interface("panic", r).Msg("backend EndSend failed")
		}
	}()
	s.bs.EndSend()
}

// compileWait checks a caller's wait policy and compiles its pattern.
func compileWait(w messages.WaitPolicy) (*regexp.Regexp, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if w.Pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(w.Pattern)
	if err != nil {
		return nil, messages.InvalidArgument("wait pattern: %v", err)
	}
	return re, nil
}

// errNoTerminal: the session's backend keeps no screen (backend.Terminal).
var errNoTerminal = messages.InvalidArgument("this session's backend has no terminal screen")

// errNoStream: the session's backend keeps no event stream
// (backend.Recorder).
var errNoStream = messages.InvalidArgument("this session's backend keeps no event stream")
