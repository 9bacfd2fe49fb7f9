package remote

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// remoteRoutes is the proxy's messages, each to its handler: the same
// session requests as the session actor's (actors/session_routes.go),
// routed alike where actorkit shares the rule, and the link's reports.
var remoteRoutes = func() actorkit.Table[*remoteSession] {
	t := actorkit.Table[*remoteSession]{}
	// Lifecycle and the link's reports.
	actorkit.On(t, (*remoteSession).onStarted)
	actorkit.On(t, (*remoteSession).onCancelSpawn)
	actorkit.On(t, (*remoteSession).onReply)
	actorkit.On(t, func(p *remoteSession, ctx actor.Context, m *linkExited) { p.setStatus(ctx, m.status) })
	actorkit.On(t, func(p *remoteSession, _ actor.Context, m *linkControl) { p.onControlChanged(m) })
	actorkit.On(t, func(p *remoteSession, ctx actor.Context, m *linkLost) { p.lose(ctx, m.err) })
	actorkit.On(t, func(p *remoteSession, ctx actor.Context, _ *linkDetached) { p.detach(ctx) })
	actorkit.On(t, func(p *remoteSession, _ actor.Context, _ *actor.Stopping) { p.onStopping() })
	// Viewers (watch.go).
	actorkit.On(t, (*remoteSession).onWatch)
	actorkit.On(t, func(p *remoteSession, _ actor.Context, _ *watchPicture) { p.onPicture() })
	actorkit.On(t, func(p *remoteSession, _ actor.Context, _ *watchTick) { p.onWatchTick() })
	// Sends, and the waits that follow an adopted one (follow.go).
	actorkit.On(t, (*remoteSession).onLookup)
	actorkit.On(t, (*remoteSession).onStartSend)
	actorkit.On(t, (*remoteSession).onAwait)
	actorkit.On(t, (*remoteSession).onReadSendOutput)
	actorkit.On(t, (*remoteSession).onCancelSend)
	actorkit.On(t, (*remoteSession).onFollowDeadline)
	// The terminal, through the host.
	actorkit.On(t, (*remoteSession).onRead)
	actorkit.On(t, (*remoteSession).onSignal)
	actorkit.On(t, (*remoteSession).onDescribe)
	actorkit.On(t, (*remoteSession).onGetScreen)
	actorkit.On(t, (*remoteSession).onResize)
	actorkit.On(t, func(p *remoteSession, ctx actor.Context, m *protocol.TakeControl) { p.onControl(ctx, m) })
	actorkit.On(t, func(p *remoteSession, ctx actor.Context, m *protocol.ControlInput) { p.onControl(ctx, m) })
	actorkit.On(t, func(p *remoteSession, ctx actor.Context, m *protocol.ReturnControl) { p.onControl(ctx, m) })
	actorkit.On(t, (*remoteSession).onEnterSecret)
	actorkit.On(t, (*remoteSession).onMark)
	// The close.
	actorkit.On(t, (*remoteSession).onKill)
	actorkit.On(t, (*remoteSession).onCloseSession)
	return t
}()

func (p *remoteSession) Receive(ctx actor.Context) {
	if actorkit.RefuseStranger(ctx, p.owner, p.phase) || remoteRoutes.Dispatch(p, ctx) {
		return
	}
	if m := ctx.Message(); isSessionRequest(m) {
		// A request the wire does not carry.
		ctx.Respond(protocol.Refuse(m, errNotThroughHost))
	}
}

func (p *remoteSession) onStarted(ctx actor.Context, _ *actor.Started) {
	p.self, p.ownerPID, p.sys = ctx.Self(), ctx.Parent(), ctx.ActorSystem()
	if p.adopt != nil {
		p.onAdopted(ctx)
		return
	}
	req := p.spec.SpawnRequest
	p.spawnCall = p.call(&wire.Request{Body: &wire.Request_Spawn{Spawn: &wire.Spawn{Type: req.Type, Name: req.Name, Cwd: req.Cwd, ClientSession: string(p.id)}}}, false, true)
}

func (p *remoteSession) onCancelSpawn(_ actor.Context, _ *seam.CancelSpawn) {
	if p.phase == phaseStarting {
		p.tell(&wire.Request{Body: &wire.Request_CancelSpawn{CancelSpawn: &wire.CancelSpawn{SpawnCall: p.spawnCall}}})
	}
}

func (p *remoteSession) onLookup(ctx actor.Context, _ *protocol.LookupSession) {
	ctx.Respond(&protocol.LookupReply{PID: p.self})
}

// current is the ticket of the reserved, unsettled send (0: none).
func (p *remoteSession) current() uint64 {
	if p.cur == nil {
		return 0
	}
	return p.cur.ticket
}

// refusal is why the proxy forwards no request now: closing, or its host
// lost.
func (p *remoteSession) refusal() error {
	switch {
	case p.phase.Closing():
		return messages.ErrSessionClosing
	case p.lostErr != nil:
		return p.lostErr
	}
	return nil
}

func (p *remoteSession) onStartSend(ctx actor.Context, m *protocol.StartSend) {
	switch {
	case p.phase.Closing():
		ctx.Respond(&protocol.StartSendReply{Err: messages.ErrSessionClosing})
	case protocol.IsWait(m.Request) && p.followable():
		p.follow(ctx, m)
	case p.snap.Status.Exited:
		ctx.Respond(&protocol.StartSendReply{Err: p.exitedErr()})
	default:
		op := &remoteOp{msg: m, sender: ctx.Sender(), notify: m.NotifySettled}
		p.forward(op, &wire.Request{Body: &wire.Request_StartSend{StartSend: wire.StartSendTo(p.hostID, m.Request)}}, true)
	}
}

func (p *remoteSession) onAwait(ctx actor.Context, m *protocol.AwaitSend) {
	actorkit.Await(ctx, p.id, m, p.last, p.current(), func() {
		p.cur.subscribers = append(p.cur.subscribers, ctx.Sender())
	})
}

func (p *remoteSession) onReadSendOutput(ctx actor.Context, m *protocol.ReadSendOutput) {
	if isFollowTicket(m.Ticket) {
		p.readFollowed(ctx, m)
		return
	}
	actorkit.ReadOutput(ctx, m, p.last, p.current(), func() {
		p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_ReadSendOutput{ReadSendOutput: &wire.ReadSendOutput{Session: p.hostID, Ticket: m.Ticket}}}, false)
	})
}

func (p *remoteSession) onCancelSend(ctx actor.Context, m *protocol.CancelSend) {
	if isFollowTicket(m.Ticket) {
		// A wait that follows ends; the send it follows goes on.
		ctx.Respond(&protocol.CancelSendReply{Accepted: p.unfollow(m.Ticket, messages.SendResult{Cause: messages.CauseCancelled}, messages.ErrAbortedBeforeWrite)})
		return
	}
	actorkit.Cancel(ctx, m, p.current(), func() {
		p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_CancelSend{CancelSend: &wire.CancelSend{Session: p.hostID, Ticket: m.Ticket}}}, false)
	})
}

// onFollowDeadline: a wait that follows an adopted send ran out of time.
func (p *remoteSession) onFollowDeadline(_ actor.Context, m *followDeadline) {
	p.unfollow(m.ticket, messages.SendResult{WaitReason: messages.WaitTimeout, Cause: messages.CauseDeadline, Elapsed: m.after}, nil)
}

func (p *remoteSession) onRead(ctx actor.Context, m *protocol.Read) {
	if p.lostErr != nil {
		ctx.Respond(&protocol.ReadReply{Err: p.lostErr})
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_Read{Read: wire.ReadTo(messages.SessionID(p.hostID), m.Request)}}, false)
}

func (p *remoteSession) onSignal(ctx actor.Context, m *protocol.SignalSession) {
	var err error
	switch {
	case !m.Signal.Valid():
		_, err = messages.ParseSignal(string(m.Signal))
	case p.phase.Closing():
		err = messages.ErrSessionClosing
	case p.snap.Status.Exited:
		err = p.exitedErr()
	}
	if err != nil {
		ctx.Respond(&protocol.SignalReply{Err: err})
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_Signal{Signal: &wire.Signal{Session: p.hostID, Signal: string(m.Signal)}}}, false)
}

func (p *remoteSession) onDescribe(ctx actor.Context, m *protocol.Describe) {
	if p.lostErr != nil || p.detached || p.phase == phaseClosed {
		// The host has nothing newer to say.
		snap := p.snap
		if p.lostErr != nil {
			a := p.lostActivity()
			snap.Activity = &a
		}
		ctx.Respond(&protocol.DescribeReply{Snapshot: snap})
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_Describe{Describe: &wire.Describe{Session: p.hostID}}}, false)
}

func (p *remoteSession) onGetScreen(ctx actor.Context, m *protocol.GetScreen) {
	if p.lostErr != nil {
		// The screen is on the host, out of reach.
		ctx.Respond(&protocol.ScreenReply{Err: p.lostErr})
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_GetScreen{GetScreen: &wire.GetScreen{Session: p.hostID}}}, false)
}

func (p *remoteSession) onResize(ctx actor.Context, m *protocol.Resize) {
	if err := p.refusal(); err != nil {
		ctx.Respond(&protocol.ResizeReply{Err: err})
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_Resize{Resize: wire.ResizeTo(messages.SessionID(p.hostID), m.Rows, m.Cols, m.ControlEpoch)}}, false)
}

// onControl: the host's session holds the control state: a person's
// hold is taken, typed into and handed back there.
func (p *remoteSession) onControl(ctx actor.Context, m any) {
	if err := p.refusal(); err != nil {
		ctx.Respond(protocol.Refuse(m, err))
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: p.controlBody(m)}, false)
}

// onEnterSecret: the host's session proves the prompt still waits
// (secret.go).
func (p *remoteSession) onEnterSecret(ctx actor.Context, m *protocol.EnterSecret) {
	if err := p.refusal(); err != nil {
		ctx.Respond(&protocol.EnterSecretReply{Err: err})
		return
	}
	req, secret := p.enterSecret(m)
	p.forward(&remoteOp{msg: m, sender: ctx.Sender(), secret: secret}, req, false)
}

// onMark: the label is checked on the host, where the record is.
func (p *remoteSession) onMark(ctx actor.Context, m *protocol.Mark) {
	if err := p.refusal(); err != nil {
		ctx.Respond(&protocol.MarkReply{Err: err})
		return
	}
	p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_Mark{Mark: &wire.Mark{Session: p.hostID, Label: m.Label}}}, false)
}

func isSessionRequest(m any) bool {
	_, _, ok := protocol.Target(m)
	return ok
}

// onKill: the model's close (the host refuses it while a person holds
// the input, control.go).
func (p *remoteSession) onKill(ctx actor.Context, m *protocol.Kill) {
	p.beginClose(ctx, actorkit.KillReason(m), closeWaiter{PID: ctx.Sender(), Kill: true})
}

// onCloseSession: the owner's close.
func (p *remoteSession) onCloseSession(ctx actor.Context, m *seam.CloseSession) {
	p.beginClose(ctx, m.Reason, closeWaiter{})
}
