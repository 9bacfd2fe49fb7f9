package remote

import (
	"errors"
	"fmt"
	"time"

	"github.com/ptyactor/ptyactor/actors"

	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// remoteSession is the proxy of a session that runs on a remote host. It
// takes sessionActor's place under the owner: it answers the same session
// requests (actors/protocol/routes.go) and sends the owner the same reports (internal.go,
// "session → owner"), but every decision about the terminal is the host's:
// the proxy forwards each request as one wire call through the host's link
// and answers with what the host answered. It keeps its own table of
// pending calls, so when the host is lost it fails each of them at once
// with an error matching messages.ErrHostLost, reports the session exited
// with cause host_lost, and lets a close of it succeed (the client writes
// the session off; the host disposes it when it misses the client).
type remoteSession struct {
	id    messages.SessionID // the client's id; the host has its own
	owner messages.Owner
	spec  messages.SpawnSpec
	host  *hostEntry
	cfg   messages.Config
	clock actors.Clock
	log   zerolog.Logger

	self, ownerPID *actor.PID
	sys            *actor.ActorSystem

	phase     actorkit.Phase
	hostID    string
	snap      messages.Snapshot
	spawnCall uint64

	pending map[uint64]*remoteOp
	cur     *remoteOp             // the reserved, unsettled send
	last    *protocol.SendSettled // the most recent settled send

	closeCall    uint64
	closeStep    closeStep // what closeCall asks (control.go)
	releases     int       // holds handed back for the owner's closes (control.go)
	closeReason  string
	closeWaiters []closeWaiter
	lostErr      error
	finishing    bool
	ended        bool

	// adopt, when set, is a session of a resumed owner: it runs on the
	// host already, so the proxy starts ready instead of spawning.
	adopt *wire.ResumedSession
	// detached: the owner was detached (linkDetached); a close ends the
	// proxy only, and the host keeps the session for its grace.
	detached bool
	// The adopted send's followers (follow.go).
	follows

	// Viewers (watch.go): the mirror they read, the host's stream that
	// fills it (its WatchStart's call; 0: none runs), its renewal.
	mirror     *mirror
	activity   messages.Activity // the host's latest (Describe)
	watchCall  uint64
	watchTimer *time.Timer
}

// The proxy's phases are the session actor's (actorkit.Phase); for it
// starting is the host's spawn in progress.
const (
	phaseStarting = actorkit.PhaseStarting
	phaseReady    = actorkit.PhaseReady
	phaseClosing  = actorkit.PhaseClosing
	phaseClosed   = actorkit.PhaseClosed
)

// closeWaiter is a close's caller, as the session actor's.
type closeWaiter = actorkit.CloseWaiter

// remoteOp is a request waiting for its host's answer.
type remoteOp struct {
	msg    any // a session request (protocol.SessionRequest)
	sender *actor.PID
	// StartSend: notify gets the settlement; reserved once the host gave
	// the ticket; subscribers are AwaitSend callers.
	notify      bool
	reserved    bool
	ticket      uint64
	subscribers []*actor.PID
	// adopted: the send of a resumed owner, started by another client;
	// waits follow it (followers).
	adopted   bool
	followers []*follower
	// secret: EnterSecret's copy of the secret on the wire (secret.go).
	secret []byte
}

func newRemoteSession(id messages.SessionID, owner messages.Owner, spec messages.SpawnSpec, host *hostEntry, adopt *wire.ResumedSession, cfg messages.Config, clock actors.Clock, log zerolog.Logger) *remoteSession {
	return &remoteSession{id: id, owner: owner, spec: spec, host: host, adopt: adopt, cfg: cfg, clock: clock, log: log, pending: map[uint64]*remoteOp{}}
}

// errDetached fails what was pending on a proxy whose owner was detached.
var errDetached = fmt.Errorf("%w: the owner was detached from this client", messages.ErrSessionClosing)

// call sends a wire request through the link; its answer comes back as
// *linkReply with the returned call id.
func (p *remoteSession) call(req *wire.Request, multi, spawn bool) uint64 {
	req.Call = p.host.newCall()
	p.sys.Root.Send(p.host.link, &linkCall{owner: p.owner, req: req, replyTo: p.self, multi: multi, spawn: spawn})
	return req.Call
}

// tell sends a wire request nobody answers.
func (p *remoteSession) tell(req *wire.Request) {
	req.Call = p.host.newCall()
	p.sys.Root.Send(p.host.link, &linkCall{owner: p.owner, req: req})
}

func (p *remoteSession) forward(op *remoteOp, req *wire.Request, multi bool) {
	if p.detached {
		if op.sender != nil {
			p.sys.Root.Send(op.sender, protocol.Refuse(op.msg, errDetached))
		}
		return
	}
	p.pending[p.call(req, multi, false)] = op
}

// hostErr decodes the host's error. The session is named by the
// client's id, never the host's: its text says the client's id where the
// host wrote its own, and an unknown session is the client's refusal.
func (p *remoteSession) hostErr(w *wire.Error) error {
	err := wire.ErrorFrom(wire.Renamed(w, p.hostID, string(p.id)))
	if errors.Is(err, messages.ErrNoSession) {
		return messages.NoSession(p.id)
	}
	return err
}

func (p *remoteSession) exitedErr() error {
	if p.lostErr != nil {
		return fmt.Errorf("%w (%w)", messages.ErrSessionExited, p.lostErr)
	}
	return messages.ErrSessionExited
}

func (p *remoteSession) onReply(ctx actor.Context, m *linkReply) {
	if m.err != nil {
		p.lose(ctx, m.err)
		return
	}
	if m.rep.GetWatchBatch() != nil || m.call == p.watchCall && p.watchCall != 0 {
		if m.call == p.watchCall && p.watchCall != 0 {
			p.onWatchBatch(m.rep)
		}
		return // else a stream that was replaced or stopped
	}
	switch m.call {
	case p.spawnCall:
		p.onSpawned(ctx, m.rep)
		return
	case p.closeCall:
		p.onCloseStep(ctx, m.rep)
		return
	}
	op := p.pending[m.call]
	if op == nil {
		return
	}
	rep := m.rep
	err := p.hostErr(rep.Error)
	if _, ok := op.msg.(*protocol.StartSend); ok {
		p.onSendReply(ctx, m.call, op, rep, err)
		return
	}
	delete(p.pending, m.call)
	var reply any
	switch op.msg.(type) {
	case *protocol.ReadSendOutput:
		r := rep.GetReadSendOutput()
		reply = &protocol.ReadSendOutputReply{Read: messages.SendRead{Delta: r.GetDelta(), Truncated: r.GetTruncated()}, Settled: r.GetSettled(), Err: err}
	case *protocol.CancelSend:
		reply = &protocol.CancelSendReply{Accepted: rep.GetCancelSend().GetAccepted()}
	case *protocol.Read:
		reply = &protocol.ReadReply{Result: wire.ReadResultFrom(rep.GetRead()), Err: err}
	case *protocol.SignalSession:
		reply = &protocol.SignalReply{Result: wire.SignalResultFrom(rep.GetSignal()), Err: err}
	case *protocol.Describe:
		reply = p.described(ctx, rep, err)
	case *protocol.GetScreen:
		if err == nil && rep.GetScreen() == nil {
			err = fmt.Errorf("%w: malformed screen reply", messages.ErrTransport)
		}
		reply = &protocol.ScreenReply{Screen: wire.ScreenFrom(rep.GetScreen()), Err: err}
	case *protocol.Resize:
		reply = &protocol.ResizeReply{Err: err}
	case *protocol.Mark:
		reply = &protocol.MarkReply{Seq: rep.GetMark().GetSeq(), Err: err}
	case *protocol.TakeControl, *protocol.ControlInput, *protocol.ReturnControl:
		reply = controlReply(op.msg, rep, err)
	case *protocol.EnterSecret:
		reply = secretReply(op, rep, err)
	}
	ctx.Send(op.sender, reply)
	p.maybeFinish(ctx)
}

func (p *remoteSession) onSendReply(ctx actor.Context, call uint64, op *remoteOp, rep *wire.Reply, err error) {
	if sr := rep.GetStartSend(); sr != nil && err == nil && !op.reserved {
		op.reserved, op.ticket = true, sr.GetTicket()
		p.unclaimed = nil // the caller moved on
		if op.notify {
			op.subscribers = append(op.subscribers, op.sender)
		}
		p.cur = op
		ctx.Send(op.sender, &protocol.StartSendReply{Ticket: op.ticket})
		return
	}
	st := rep.GetSendSettled()
	if st == nil && op.sender == nil {
		// An adopted send's AwaitSend failed: nobody asked for it but
		// the waits that follow it.
		delete(p.pending, call)
		if p.cur == op {
			p.cur = nil
		}
		if err == nil {
			err = fmt.Errorf("%w: malformed send reply", messages.ErrTransport)
		}
		p.followed(op, &protocol.SendSettled{Session: p.id, Ticket: op.ticket, Result: messages.SendResult{Status: p.snap.Status}, Err: err})
		p.maybeFinish(ctx)
		return
	}
	if st == nil || !op.reserved {
		delete(p.pending, call)
		if err == nil {
			err = fmt.Errorf("%w: malformed send reply", messages.ErrTransport)
		}
		ctx.Send(op.sender, &protocol.StartSendReply{Err: err})
		p.maybeFinish(ctx)
		return
	}
	p.settle(ctx, call, op, &protocol.SendSettled{Session: p.id, Ticket: op.ticket, Result: p.result(st.GetResult()), Err: err})
}

// settle delivers a send's settlement to its waiters and frees the slot.
func (p *remoteSession) settle(ctx actor.Context, call uint64, op *remoteOp, s *protocol.SendSettled) {
	delete(p.pending, call)
	if p.cur == op {
		p.cur = nil
	}
	p.last = s
	p.snap.SecretPrompt = s.Result.Secret
	for _, pid := range op.subscribers {
		ctx.Send(pid, s)
	}
	if op.adopted {
		p.followed(op, s)
	}
	r := s.Result
	p.sys.EventStream.Publish(&protocol.EventSendSettled{
		Owner: p.owner, Session: p.id, Ticket: s.Ticket, WaitReason: r.WaitReason, Cause: r.Cause,
		ExitCode: r.ExitCode, Reader: r.Reader, Secret: r.Secret, Cursor: r.Cursor, Err: s.Err,
	})
	if s.Result.Status.Exited && !p.snap.Status.Exited {
		p.setStatus(ctx, s.Result.Status)
	}
	p.maybeFinish(ctx)
}

func (p *remoteSession) onSpawned(ctx actor.Context, rep *wire.Reply) {
	if p.phase != phaseStarting {
		return
	}
	if err := wire.ErrorFrom(rep.Error); err != nil || rep.GetSpawn() == nil {
		if err == nil {
			err = fmt.Errorf("%w: malformed spawn reply", messages.ErrTransport)
		}
		p.startFailed(ctx, err)
		return
	}
	snap := wire.SnapshotFrom(rep.GetSpawn().GetSnapshot())
	p.hostID = string(snap.SessionID)
	snap.SessionID = p.id
	p.snap = snap
	p.phase = phaseReady
	ctx.Send(p.host.link, &linkWatch{session: p.hostID, pid: p.self, owner: p.owner})
	ctx.Send(p.ownerPID, &seam.Started{ID: p.id, Result: messages.SpawnResult{Snapshot: snap, Motd: rep.GetSpawn().GetMotd()}})
}

// onAdopted makes the proxy of a session its resumed owner has on the
// host already: published as the host sees it now, and with its latest
// send (in flight or settled) awaited, so AwaitSend, the settled event
// and the next send's reservation behave as if this client had started it.
func (p *remoteSession) onAdopted(ctx actor.Context) {
	a := p.adopt
	snap := wire.SnapshotFrom(a.GetSnapshot())
	p.hostID = string(snap.SessionID)
	snap.SessionID = p.id
	p.snap = snap
	p.phase = phaseReady
	ctx.Send(p.host.link, &linkRetain{owner: p.owner, pid: p.self})
	ctx.Send(p.host.link, &linkWatch{session: p.hostID, pid: p.self, owner: p.owner})
	if t := a.GetTicket(); t != 0 {
		op := &remoteOp{msg: &protocol.StartSend{Owner: p.owner, Session: p.id}, reserved: true, ticket: t, adopted: true}
		p.cur = op
		p.forward(op, &wire.Request{Body: &wire.Request_AwaitSend{AwaitSend: &wire.AwaitSend{Session: p.hostID, Ticket: t}}}, false)
	}
	ctx.Send(p.ownerPID, &seam.Started{ID: p.id, Result: messages.SpawnResult{Snapshot: snap}})
}

// detach: the owner leaves this client and its session stays on the
// host. What is pending here ends now; a close ends only the proxy.
func (p *remoteSession) detach(ctx actor.Context) {
	if p.detached || p.lostErr != nil {
		return
	}
	p.detached = true
	pending := p.pending
	p.pending = map[uint64]*remoteOp{}
	for call, op := range pending {
		if _, ok := op.msg.(*protocol.StartSend); ok && op.reserved {
			p.pending[call] = op
			p.settle(ctx, call, op, &protocol.SendSettled{Session: p.id, Ticket: op.ticket, Result: messages.SendResult{Status: p.snap.Status}, Err: errDetached})
			continue
		}
		if op.sender != nil {
			ctx.Send(op.sender, protocol.Refuse(op.msg, errDetached))
		}
	}
	if p.closeCall != 0 {
		p.closed(ctx, messages.CloseReport{Status: p.snap.Status})
	}
	p.maybeFinish(ctx)
}

func (p *remoteSession) startFailed(ctx actor.Context, err error) {
	ctx.Send(p.ownerPID, &seam.StartFailed{ID: p.id, Err: err})
	p.phase = phaseClosed
	p.finish(ctx)
}

// described answers a Describe with the host's snapshot of the session
// now, under the client's id; an exit it reports is recorded as one the
// host pushed.
func (p *remoteSession) described(ctx actor.Context, rep *wire.Reply, err error) *protocol.DescribeReply {
	if err != nil || rep.GetDescribe() == nil {
		if err == nil {
			err = fmt.Errorf("%w: malformed describe reply", messages.ErrTransport)
		}
		return &protocol.DescribeReply{Err: err}
	}
	snap := wire.SnapshotFrom(rep.GetDescribe())
	snap.SessionID = p.id
	if snap.Status.Exited {
		p.setStatus(ctx, snap.Status)
	}
	p.snap.SecretPrompt, p.snap.Control = snap.SecretPrompt, snap.Control
	if a := snap.Activity; a != nil {
		p.activity = *a
		if p.mirror != nil {
			p.mirror.setActivity(*a)
		}
	}
	if p.snap.Status.Exited {
		// An exit the client knows of first (host_lost, a pushed exit)
		// stands.
		snap.Status = p.snap.Status
	}
	return &protocol.DescribeReply{Snapshot: snap}
}

// setStatus records the session's status and reports an exit as
// sessionActor does.
func (p *remoteSession) setStatus(ctx actor.Context, st messages.SessionStatus) {
	if p.snap.Status.Exited {
		return
	}
	p.snap.Status = st
	if p.phase == phaseStarting {
		return
	}
	ctx.Send(p.ownerPID, &seam.StatusChanged{ID: p.id, Status: st})
	if st.Exited {
		p.sys.EventStream.Publish(&protocol.EventSessionExited{Owner: p.owner, Session: p.id, Status: st})
	}
}

// lose: the host is lost. Everything pending fails now with err.
func (p *remoteSession) lose(ctx actor.Context, err error) {
	if p.lostErr != nil || p.phase == phaseClosed && p.finishing {
		return
	}
	p.lostErr = err
	p.watchCall = 0
	if p.mirror != nil {
		p.mirror.setLost()
	}
	if p.phase == phaseStarting {
		p.startFailed(ctx, err)
		return
	}
	p.setStatus(ctx, messages.SessionStatus{Exited: true, Cause: messages.CauseHostLost})
	pending := p.pending
	p.pending = map[uint64]*remoteOp{}
	for call, op := range pending {
		if _, ok := op.msg.(*protocol.StartSend); ok && op.reserved {
			p.pending[call] = op
			p.settle(ctx, call, op, &protocol.SendSettled{Session: p.id, Ticket: op.ticket,
				Result: messages.SendResult{WaitReason: messages.WaitSessionExit, Status: p.snap.Status}, Err: err})
			continue
		}
		ctx.Send(op.sender, protocol.Refuse(op.msg, err))
	}
	if p.closeCall != 0 {
		p.closed(ctx, messages.CloseReport{Status: p.snap.Status})
	}
	p.maybeFinish(ctx)
}

// beginClose starts a close, or joins the one in flight.
func (p *remoteSession) beginClose(ctx actor.Context, reason string, w closeWaiter) {
	switch {
	case p.phase == phaseClosed:
		p.replyClose(w, false, messages.CloseReport{Status: p.snap.Status}, nil)
		return
	case p.closeCall != 0:
		w.Joined = true
		p.closeWaiters = append(p.closeWaiters, w)
		return
	}
	p.phase, p.closeReason = phaseClosing, reason
	p.closeWaiters = append(p.closeWaiters, w)
	if p.lostErr != nil || p.detached {
		// Written off, or left to the host's grace: the host disposes
		// it when it misses this client (or a client resumes it).
		p.closed(ctx, messages.CloseReport{Status: p.snap.Status})
		p.maybeFinish(ctx)
		return
	}
	p.askKill()
}

// askKill asks the host to close the session (the close's step).
func (p *remoteSession) askKill() {
	p.closeStep = closeKill
	p.closeCall = p.call(&wire.Request{Body: &wire.Request_Kill{Kill: &wire.Kill{Session: p.hostID, Reason: p.closeReason}}}, false, false)
}

func (p *remoteSession) onClosed(ctx actor.Context, rep *wire.Reply) {
	p.closeCall = 0
	err := p.hostErr(rep.Error)
	closed, report := wire.KillFrom(rep.GetKill())
	_ = closed
	if errors.Is(err, messages.ErrControlHeld) && p.heldClose(ctx, err) {
		return
	}
	if err != nil && !errors.Is(err, messages.ErrNoSession) {
		waiters := p.closeWaiters
		p.closeWaiters = nil
		p.log.Warn().Err(err).Msg("remote close failed")
		p.sys.EventStream.Publish(&protocol.EventCleanupFailed{Owner: p.owner, Session: p.id, Err: err})
		for _, w := range waiters {
			p.replyClose(w, false, report, err)
		}
		ctx.Send(p.ownerPID, &seam.CloseFailed{ID: p.id, Err: err})
		return
	}
	// Closed, or unknown to the host (it disposed the owner already).
	if !p.snap.Status.Exited && report.Status.Exited {
		p.snap.Status = report.Status
	}
	report.Status = p.snap.Status
	p.closed(ctx, report)
	p.maybeFinish(ctx)
}

// closed finishes a close: the owner drops the record, then the Kill
// callers hear.
func (p *remoteSession) closed(ctx actor.Context, report messages.CloseReport) {
	p.phase, p.closeCall = phaseClosed, 0
	waiters := p.closeWaiters
	p.closeWaiters = nil
	p.sys.EventStream.Publish(&protocol.EventSessionClosed{Owner: p.owner, Session: p.id, Reason: p.closeReason, Report: report})
	ctx.Send(p.ownerPID, &seam.Closed{ID: p.id, Report: report, Replies: actorkit.ClosedReplies(waiters, report)})
}

func (p *remoteSession) replyClose(w closeWaiter, closed bool, report messages.CloseReport, err error) {
	w.Reply(p.sys, closed, report, err)
}

// maybeFinish retires a closed proxy once nothing is pending.
func (p *remoteSession) maybeFinish(ctx actor.Context) {
	if p.phase == phaseClosed && len(p.pending) == 0 && !p.finishing {
		p.finish(ctx)
	}
}

func (p *remoteSession) finish(ctx actor.Context) {
	p.finishing = true
	p.end()
	ctx.Poison(p.self)
}

// end gives back what the proxy holds on its host: its place in the
// placement count, its watch, its reference on the host-side owner.
func (p *remoteSession) end() {
	if p.ended {
		return
	}
	p.ended = true
	p.endWatch()
	p.host.sessions.Add(-1)
	if p.hostID != "" {
		p.sys.Root.Send(p.host.link, &linkUnwatch{session: p.hostID, pid: p.self})
	}
	p.sys.Root.Send(p.host.link, &linkRelease{owner: p.owner, pid: p.self})
}

// onStopping: stopped without a close (a failure above it, or its own).
// Its waiters still hear, the host still closes the session, and the
// owner is told as for an orphan.
func (p *remoteSession) onStopping() {
	gone := fmt.Errorf("%w: the session actor stopped", messages.ErrSessionClosing)
	for _, op := range p.pending {
		if _, ok := op.msg.(*protocol.StartSend); ok && op.reserved {
			for _, pid := range op.subscribers {
				p.sys.Root.Send(pid, &protocol.SendSettled{Session: p.id, Ticket: op.ticket, Result: messages.SendResult{Status: p.snap.Status}, Err: gone})
			}
			p.followed(op, &protocol.SendSettled{Session: p.id, Ticket: op.ticket, Result: messages.SendResult{Status: p.snap.Status}, Err: gone})
			continue
		}
		p.sys.Root.Send(op.sender, protocol.Refuse(op.msg, gone))
	}
	p.pending = nil
	if p.phase != phaseClosed {
		p.phase = phaseClosed
		if p.hostID != "" && p.lostErr == nil && !p.detached {
			if c := p.snap.Control; c.Person {
				// A person's hold, as last heard: handed back first, or
				// the host refuses the close (control.go).
				p.tell(&wire.Request{Body: &wire.Request_ReturnControl{ReturnControl: &wire.ReturnControl{Session: p.hostID, Epoch: c.Epoch}}})
			}
			p.tell(&wire.Request{Body: &wire.Request_Kill{Kill: &wire.Kill{Session: p.hostID, Reason: "PTY session actor stopped"}}})
		}
		p.sys.Root.Send(p.ownerPID, &seam.OrphanClosed{ID: p.id})
	}
	p.end()
}

// errNotThroughHost: a session request the wire protocol does not carry
// (every one of actors/protocol/routes.go's does today; a new one needs wire.proto, the
// gateway and this proxy).
var errNotThroughHost = messages.InvalidArgument("not available for a session on a remote host")
