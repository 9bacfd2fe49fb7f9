package actors

import (
	"regexp"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// The session's one-send slot: a send reserves it (StartSend), its actor
// runs the send, and the slot is free again once that actor settled and
// drained (or failed).

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
		a.handback = s.control.TakeHandback()
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
	s.control.SendGone()
}

// onStartSendMsg reserves the slot for the caller of a StartSend.
func (s *sessionActor) onStartSendMsg(ctx actor.Context, m *protocol.StartSend) {
	s.onStartSend(ctx, m, ctx.Sender())
}

func (s *sessionActor) onStartSend(ctx actor.Context, m *protocol.StartSend, sender *actor.PID) {
	var err error
	switch {
	case s.phase.Closing():
		err = messages.ErrSessionClosing
	case s.status.Exited:
		err = messages.ErrSessionExited
	case s.sendPID != nil && s.sendSettled && !s.sendStartup:
		// Settled, draining its write or interrupt: answer once drained.
		s.queuedStarts = append(s.queuedStarts, queuedStart{msg: m, sender: sender})
		return
	case s.control.State().Person && !protocol.IsWait(m.Request):
		err = s.control.HeldErr()
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
	pattern, err := checkSend(m.Request)
	if err != nil {
		ctx.Send(sender, &protocol.StartSendReply{Err: err})
		return
	}
	// Elapsed counts from the reservation, which includes the inline
	// write: the program may start on its input before the actor exists.
	a := &sendActor{req: m.Request, pattern: pattern, started: s.clock.Now()}
	s.secretPrompt = false
	// A wait without the caller's cursor shows what the backend collected
	// from where the previous send's output ended (Resume).
	a.since = m.Request.Wait.Since
	ticket := s.spawnSend(ctx, a, notify, false)
	ctx.Send(sender, &protocol.StartSendReply{Ticket: ticket})
}

// checkSend checks a caller's send request (its keys, its wait policy)
// and compiles its wait pattern.
func checkSend(req messages.SendRequest) (*regexp.Regexp, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	for _, k := range req.Keys {
		if _, err := backend.EncodeKey(k, false); err != nil {
			return nil, err
		}
	}
	return compileWait(req.Wait)
}

// runQueuedStarts answers the starts that waited for a draining send, in
// order, once the slot is free or the session can no longer send: the
// first takes the slot, the rest find it active.
func (s *sessionActor) runQueuedStarts(ctx actor.Context) {
	if s.sendPID != nil && s.sendSettled && !s.phase.Closing() {
		return
	}
	q := s.queuedStarts
	s.queuedStarts = nil
	for _, w := range q {
		s.onStartSend(ctx, w.msg, w.sender)
	}
}

func (s *sessionActor) onAwait(ctx actor.Context, m *protocol.AwaitSend) {
	actorkit.Await(ctx, s.id, m, s.last, s.current(), func() {
		s.subscribers = append(s.subscribers, ctx.Sender())
		ctx.Forward(s.sendPID)
	})
}

func (s *sessionActor) onReadSendOutput(ctx actor.Context, m *protocol.ReadSendOutput) {
	actorkit.ReadOutput(ctx, m, s.last, s.current(), func() { ctx.Forward(s.sendPID) })
}

func (s *sessionActor) onCancelSend(ctx actor.Context, m *protocol.CancelSend) {
	actorkit.Cancel(ctx, m, s.current(), func() { ctx.Forward(s.sendPID) })
}

// recordSettled takes a send's settlement: its waiters hear, and the slot
// is free unless its write or SIGINT still drains. False for a failed
// send's duplicate report.
func (s *sessionActor) recordSettled(ctx actor.Context, m *sendFinished) bool {
	if s.last != nil && m.ticket <= s.last.Ticket {
		return false // a failed send's duplicate report
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
	return true
}

// publishSettled tells the service's watchers an agent's send settled.
func (s *sessionActor) publishSettled(m *sendFinished) {
	r := m.result
	s.sys.EventStream.Publish(&protocol.EventSendSettled{
		Owner: s.owner, Session: s.id, Ticket: m.ticket, WaitReason: r.WaitReason, Cause: r.Cause,
		ExitCode: r.ExitCode, Reader: r.Reader, Secret: r.Secret, Cursor: r.Cursor, Seq: r.Seq, Err: m.err,
	})
}

// onSendDrained: the settled send's write or SIGINT ended; the slot is
// free.
func (s *sessionActor) onSendDrained(ctx actor.Context, m *sendDrained) {
	if s.sendPID != nil && m.ticket == s.sendTicket {
		s.freeSlot(ctx)
	}
}

// onTerminated: a send actor that failed (stopped by HandleFailure).
func (s *sessionActor) onTerminated(ctx actor.Context, m *actor.Terminated) {
	if s.sendPID != nil && m.Who.Equal(s.sendPID) {
		s.sendPID = nil
		s.freeSlot(ctx)
	}
}

// freeSlot frees the slot for the starts that waited for it, and retires
// a closed session.
func (s *sessionActor) freeSlot(ctx actor.Context) {
	s.releaseSlot(ctx)
	s.runQueuedStarts(ctx)
	s.maybeFinish(ctx)
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
