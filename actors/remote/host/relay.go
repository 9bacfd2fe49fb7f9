package host

// A client's request relayed to the runtime: the request mapped to the
// runtime's protocol (toProtocol), the relay that stands as its sender,
// and the runtime's replies mapped back to the wire (onReply).

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// relay stands as the sender of one protocol request the gateway sends to
// the runtime on a client's behalf: whatever the runtime answers comes
// back to the gateway's mailbox with the relay, which names the call and
// the client. It is a process, not an actor (as the facade's reply box):
// no goroutine, no future, no timeout. The gateway removes it from the
// registry once the call's last reply went out.
type relay struct {
	gw  *actor.PID
	sys *actor.ActorSystem
	pid *actor.PID

	// Owned by the gateway's mailbox from here on.
	call uint64
	to   *actor.PID // the client's link
	rec  *ownerRec  // nil for an unknown token
	// session: the host session the request names, if any.
	session messages.SessionID
	done    bool

	// OpenOwner: the tokens minted for the owner being opened.
	open          *ownerRec
	token, resume string
	// internal: a dispose of a lost client's owner; nobody is answered.
	internal bool
	// resumed: a ResumeOwner's List of the owner's sessions; token is its
	// new capability token.
	resumed *ownerRec
	// clientSession: a Spawn's client-side id of the session.
	clientSession string

	// StartSend (isStart): the reservation was answered (started); a
	// settlement that overtook it waits in early.
	isStart bool
	started bool
	early   *wire.Reply
}

// relayed is a runtime reply the relay hands to the gateway.
type relayed struct {
	r   *relay
	msg any
}

func (r *relay) SendUserMessage(_ *actor.PID, m any) {
	r.sys.Root.Send(r.gw, &relayed{r: r, msg: actor.UnwrapEnvelopeMessage(m)})
}
func (r *relay) SendSystemMessage(*actor.PID, any) {}
func (r *relay) Stop(*actor.PID)                   {}

var _ actor.Process = (*relay)(nil)

// toProtocol maps a wire request to the runtime's message; nil when the
// body is none the gateway relays.
func toProtocol(o messages.Owner, req *wire.Request) any {
	switch b := req.Body.(type) {
	case *wire.Request_Spawn:
		req := messages.SpawnRequest{Type: b.Spawn.GetType(), Name: b.Spawn.GetName(), Cwd: b.Spawn.GetCwd()}
		if cs := b.Spawn.GetClientSession(); cs != "" && len(cs) <= 64 {
			// The record on this host names the session as its client does.
			req.RecordAs = messages.SessionID(cs)
		}
		return &protocol.Spawn{Owner: o, Request: req}
	case *wire.Request_StartSend:
		s := b.StartSend
		return &protocol.StartSend{Owner: o, Session: messages.SessionID(s.GetSession()), NotifySettled: true,
			Request: wire.SendRequestFrom(s)}
	case *wire.Request_AwaitSend:
		return &protocol.AwaitSend{Owner: o, Session: messages.SessionID(b.AwaitSend.GetSession()), Ticket: b.AwaitSend.GetTicket()}
	case *wire.Request_ReadSendOutput:
		return &protocol.ReadSendOutput{Owner: o, Session: messages.SessionID(b.ReadSendOutput.GetSession()), Ticket: b.ReadSendOutput.GetTicket()}
	case *wire.Request_CancelSend:
		return &protocol.CancelSend{Owner: o, Session: messages.SessionID(b.CancelSend.GetSession()), Ticket: b.CancelSend.GetTicket()}
	case *wire.Request_Read:
		return &protocol.Read{Owner: o, Session: messages.SessionID(b.Read.GetSession()), Request: wire.ReadRequestFrom(b.Read)}
	case *wire.Request_Signal:
		return &protocol.SignalSession{Owner: o, Session: messages.SessionID(b.Signal.GetSession()), Signal: messages.Signal(b.Signal.GetSignal())}
	case *wire.Request_Kill:
		return &protocol.Kill{Owner: o, Session: messages.SessionID(b.Kill.GetSession()), Reason: b.Kill.GetReason()}
	case *wire.Request_Describe:
		return &protocol.Describe{Owner: o, Session: messages.SessionID(b.Describe.GetSession())}
	case *wire.Request_GetScreen:
		return &protocol.GetScreen{Owner: o, Session: messages.SessionID(b.GetScreen.GetSession())}
	case *wire.Request_Resize:
		id, rows, cols, epoch := wire.ResizeFrom(b.Resize)
		return &protocol.Resize{Owner: o, Session: id, Rows: rows, Cols: cols, ControlEpoch: epoch}
	case *wire.Request_TakeControl:
		return &protocol.TakeControl{Owner: o, Session: messages.SessionID(b.TakeControl.GetSession()), Request: wire.TakeControlRequestFrom(b.TakeControl)}
	case *wire.Request_ControlInput:
		c := b.ControlInput
		return &protocol.ControlInput{Owner: o, Session: messages.SessionID(c.GetSession()), Epoch: c.GetEpoch(), Data: c.GetData()}
	case *wire.Request_ReturnControl:
		c := b.ReturnControl
		return &protocol.ReturnControl{Owner: o, Session: messages.SessionID(c.GetSession()), Epoch: c.GetEpoch()}
	case *wire.Request_EnterSecret:
		// The prompt names the session by this host's id, as the
		// request does; the session zeroes the secret once written.
		p, secret := wire.EnterSecretFrom(b.EnterSecret)
		return &protocol.EnterSecret{Owner: o, Session: messages.SessionID(b.EnterSecret.GetSession()), Prompt: p, Secret: secret}
	case *wire.Request_Mark:
		return &protocol.Mark{Owner: o, Session: messages.SessionID(b.Mark.GetSession()), Label: b.Mark.GetLabel()}
	case *wire.Request_List:
		return &protocol.List{Owner: o}
	case *wire.Request_DisposeOwner:
		return &protocol.DisposeOwner{Owner: o}
	}
	return nil
}

func (g *gateway) relay(call uint64, to *actor.PID, rec *ownerRec) *relay {
	r := &relay{gw: g.self, sys: g.sys, call: call, to: to, rec: rec}
	r.pid, _ = g.sys.ProcessRegistry.Add(r, "ptyhost-relay"+g.sys.ProcessRegistry.NextId())
	g.relays[r] = struct{}{}
	return r
}

func (g *gateway) drop(r *relay) {
	r.done = true
	g.sys.ProcessRegistry.Remove(r.pid)
	delete(g.relays, r)
}

// onReply turns the runtime's reply into the wire's and sends it to the
// client; the relay is dropped once its call is answered for good.
func (g *gateway) onReply(r *relay, msg any) {
	rep := &wire.Reply{Call: r.call}
	var err error
	switch m := msg.(type) {
	case *protocol.OpenOwnerReply:
		if err = m.Err; err == nil {
			g.ownerOpened(r, rep)
		}
	case *protocol.SpawnReply:
		err = g.spawned(r, m, rep)
	case *protocol.StartSendReply:
		if err = m.Err; err == nil {
			g.sendStarted(r, m, rep)
			return
		}
	case *protocol.SendSettled:
		err = m.Err
		rep.Body = &wire.Reply_SendSettled{SendSettled: &wire.SendSettled{Session: string(m.Session), Ticket: m.Ticket, Result: wire.SendResultTo(m.Result)}}
		if r.isStart && !r.started {
			// The settlement overtook the reservation's reply: it goes
			// out right after it.
			rep.Error = wire.ErrorTo(err)
			r.early = rep
			return
		}
	case *protocol.ListReply:
		g.listed(r, m, rep)
	case *protocol.DisposeOwnerReply:
		err = m.Err
		if r.rec != nil {
			g.forget(r.rec)
		}
		rep.Body = &wire.Reply_DisposeOwner{DisposeOwner: &wire.DisposeOwnerReply{}}
	case *actor.DeadLetterResponse:
		// The runtime actor stopped before answering: as the facade
		// does, a session's is an unknown session, else a shutdown.
		err = messages.Errorf(messages.CodeServiceDisposing, "PTY service is disposing")
		if r.session != "" {
			err = messages.NoSession(r.session)
		}
	default:
		var ok bool
		if rep.Body, ok, err = sessionReply(msg); !ok {
			g.log.Error().Str("reply", fmt.Sprintf("%T", msg)).Msg("unexpected runtime reply")
			err = fmt.Errorf("%w: unexpected reply %T", messages.ErrTransport, msg)
		}
	}
	rep.Error = wire.ErrorTo(err)
	if !r.internal {
		g.send(r.to, rep)
	}
	g.drop(r)
}

// sessionReply encodes the replies to session requests that need no
// bookkeeping here: each maps to its wire body alone. ok is false for a
// reply that is not one of them.
func sessionReply(msg any) (body wire.ReplyBody, ok bool, err error) {
	switch m := msg.(type) {
	case *protocol.ReadSendOutputReply:
		return &wire.Reply_ReadSendOutput{ReadSendOutput: &wire.ReadSendOutputReply{Delta: m.Read.Delta, Truncated: m.Read.Truncated, Settled: m.Settled}}, true, m.Err
	case *protocol.CancelSendReply:
		return &wire.Reply_CancelSend{CancelSend: &wire.CancelSendReply{Accepted: m.Accepted}}, true, nil
	case *protocol.KillReply:
		return &wire.Reply_Kill{Kill: wire.KillTo(m.Closed, m.Report)}, true, m.Err
	case *protocol.ReadReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_Read{Read: wire.ReadResultTo(m.Result)} })
	case *protocol.SignalReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_Signal{Signal: wire.SignalResultTo(m.Result)} })
	case *protocol.DescribeReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_Describe{Describe: wire.SnapshotTo(m.Snapshot)} })
	case *protocol.ScreenReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_Screen{Screen: wire.ScreenTo(m.Screen)} })
	case *protocol.ResizeReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_Resize{Resize: &wire.ResizeReply{}} })
	case *protocol.MarkReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_Mark{Mark: &wire.MarkReply{Seq: m.Seq}} })
	case *protocol.ControlReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_TakeControl{TakeControl: wire.ControlTo(m.Control)} })
	case *protocol.ControlInputReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_ControlInput{ControlInput: &wire.ControlInputReply{}} })
	case *protocol.EnterSecretReply:
		return okBody(m.Err, func() wire.ReplyBody { return &wire.Reply_EnterSecret{EnterSecret: &wire.EnterSecretReply{}} })
	case *protocol.ReturnControlReply:
		return okBody(m.Err, func() wire.ReplyBody {
			return &wire.Reply_ReturnControl{ReturnControl: wire.HandbackTo(&m.Handback)}
		})
	}
	return nil, false, nil
}

// okBody is a reply whose body exists only on success.
func okBody(err error, body func() wire.ReplyBody) (wire.ReplyBody, bool, error) {
	if err != nil {
		return nil, true, err
	}
	return body(), true, nil
}

// ownerOpened records an owner the runtime opened for a client.
func (g *gateway) ownerOpened(r *relay, rep *wire.Reply) {
	rec := r.open
	g.owners[rec.token] = rec
	g.resumes[rec.resume] = rec
	rec.client.owners[rec.token] = rec
	rep.Body = &wire.Reply_OpenOwner{OpenOwner: &wire.OpenOwnerReply{Token: r.token, ResumeToken: r.resume}}
}

// spawned records a published session under its owner, with the id the
// client knows it by.
func (g *gateway) spawned(r *relay, m *protocol.SpawnReply, rep *wire.Reply) error {
	if r.rec != nil {
		delete(r.rec.spawns, r.call)
	}
	if m.Err != nil {
		return m.Err
	}
	if r.rec != nil {
		g.sessions[m.Result.SessionID] = r.rec
		if len(r.clientSession) <= 64 && r.clientSession != "" {
			r.rec.ids[m.Result.SessionID] = r.clientSession
		}
	}
	rep.Body = &wire.Reply_Spawn{Spawn: &wire.SpawnReply{Snapshot: wire.SnapshotTo(m.Result.Snapshot), Motd: m.Result.Motd}}
	return nil
}

// sendStarted answers a reservation; the relay stays for the settlement,
// unless that overtook the reply and waits to follow it.
func (g *gateway) sendStarted(r *relay, m *protocol.StartSendReply, rep *wire.Reply) {
	if r.rec != nil && g.sessions[r.session] == r.rec {
		r.rec.tickets[r.session] = m.Ticket
	}
	rep.Body = &wire.Reply_StartSend{StartSend: &wire.StartSendReply{Ticket: m.Ticket}}
	g.send(r.to, rep)
	r.started = true
	if r.early != nil {
		g.send(r.to, r.early)
		g.drop(r)
	}
}

// listed answers a list, or a resume (a list of the resumed owner's
// sessions, under the ids and tickets its client knows).
func (g *gateway) listed(r *relay, m *protocol.ListReply, rep *wire.Reply) {
	if rec := r.resumed; rec != nil {
		res := &wire.ResumeOwnerReply{Token: r.token}
		for _, snap := range m.Sessions {
			id := snap.SessionID
			cid := rec.ids[id]
			if cid == "" {
				cid = string(id)
			}
			res.Sessions = append(res.Sessions, &wire.ResumedSession{Snapshot: wire.SnapshotTo(snap), ClientSession: cid, Ticket: rec.tickets[id]})
		}
		rep.Body = &wire.Reply_ResumeOwner{ResumeOwner: res}
		return
	}
	l := &wire.ListReply{}
	for _, s := range m.Sessions {
		l.Sessions = append(l.Sessions, wire.SnapshotTo(s))
	}
	rep.Body = &wire.Reply_List{List: l}
}
