package host

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/internal/endpoint"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// gateway is the only actor a client's messages reach. It authorizes each
// request by its token, maps it to the runtime's protocol and relays the
// runtime's reply back to the client.
type gateway struct {
	svc *actors.Service
	cfg Config
	log zerolog.Logger

	sys  *actor.ActorSystem
	self *actor.PID

	owners   map[digest]*ownerRec // by capability token
	resumes  map[digest]*ownerRec // by resume token
	clients  map[string]*clientRec
	sessions map[messages.SessionID]*ownerRec // published sessions, for the exit pushes
	asm      map[string]*wire.Assembler       // by sender: chunked requests
	relays   map[*relay]struct{}
	// records: per client (clientKey), the records of the sessions
	// closed for it, which it may fetch (fetch.go).
	records map[string]*clientRecords
	// watches: the streams of sessions to the clients watching them
	// (watch.go).
	watches map[watchKey]*pusher
	sub     *eventstream.Subscription
	timer   *time.Timer
}

// digest is a token's SHA-256: the gateway keeps only digests.
type digest [sha256.Size]byte

type ownerRec struct {
	owner  messages.Owner
	token  digest
	resume digest
	// identity is the TLS identity of the client that opened the owner
	// (endpoint.Identity; "" on an insecure host): its tokens work only
	// for requests from a client with the same identity.
	identity string
	client   *clientRec
	to       *actor.PID        // the client's link: pushes go there
	spawns   map[uint64]string // pending spawn call → Spawn.Ref
	// Per published session (the host's id): the client's id of it, and
	// the ticket of its latest send. A resuming client gets both back.
	ids     map[messages.SessionID]string
	tickets map[messages.SessionID]uint64
	// detachedAt: the client detached the owner (DetachOwner); it is
	// disposed after the grace unless a client resumes it first.
	detachedAt time.Time
}

type clientRec struct {
	id     string
	seen   time.Time
	lostAt time.Time // zero while heard
	owners map[digest]*ownerRec
}

// Messages to self.
type (
	tick       struct{}
	sessionEnd struct {
		id     messages.SessionID
		exited *messages.SessionStatus // nil: closed
		// recording: a closed session's record, if it was recorded.
		recording *messages.Recording
	}
)

func newGateway(svc *actors.Service, cfg Config) *gateway {
	return &gateway{
		svc: svc, cfg: cfg, log: cfg.Log,
		owners: map[digest]*ownerRec{}, resumes: map[digest]*ownerRec{}, clients: map[string]*clientRec{},
		sessions: map[messages.SessionID]*ownerRec{}, asm: map[string]*wire.Assembler{},
		relays: map[*relay]struct{}{}, records: map[string]*clientRecords{}, watches: map[watchKey]*pusher{},
	}
}

func (g *gateway) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		g.sys, g.self = ctx.ActorSystem(), ctx.Self()
		sys, self := g.sys, g.self
		g.sub = sys.EventStream.SubscribeWithPredicate(func(ev any) {
			switch e := ev.(type) {
			case *protocol.EventSessionExited:
				st := e.Status
				sys.Root.Send(self, &sessionEnd{id: e.Session, exited: &st})
			case *protocol.EventSessionClosed:
				// Before the close's reply, which the session sends
				// after publishing: a client that fetches the record
				// on that reply finds it kept.
				sys.Root.Send(self, &sessionEnd{id: e.Session, recording: e.Report.Recording})
			case *protocol.EventControlChanged:
				sys.Root.Send(self, e)
			}
		}, func(ev any) bool {
			switch ev.(type) {
			case *protocol.EventSessionExited, *protocol.EventSessionClosed, *protocol.EventControlChanged:
				return true
			}
			return false
		})
		g.arm()
	case *actor.Stopping:
		g.sys.EventStream.Unsubscribe(g.sub)
		g.timer.Stop()
		for r := range g.relays {
			g.drop(r)
		}
		for _, p := range g.watches {
			p.cancel()
		}
	case *wire.Request:
		if ctx.Sender() != nil {
			g.onRequest(ctx, m, ctx.Sender(), identity(ctx))
		}
	case *wire.Chunk:
		if ctx.Sender() != nil {
			g.onChunk(ctx, m, ctx.Sender(), identity(ctx))
		}
	case *relayed:
		if !m.r.done {
			g.onReply(m.r, m.msg)
		}
	case *watchDone:
		if g.watches[m.p.key] == m.p {
			delete(g.watches, m.p.key)
		}
	case *sessionEnd:
		g.onSessionEnd(m)
	case *protocol.EventControlChanged:
		// Its client hears, as of an exit: a take-over, a hand-back (an
		// idle one too).
		if rec := g.sessions[m.Session]; rec != nil {
			g.send(rec.to, &wire.Reply{Body: &wire.Reply_ControlChanged{ControlChanged: &wire.ControlChanged{
				Session: string(m.Session), Control: wire.ControlTo(m.Control), Handback: wire.HandbackTo(m.Handback)}}})
		}
	case *tick:
		g.checkClients()
		g.expireRecords(time.Now())
		g.arm()
	}
}

func (g *gateway) arm() {
	sys, self := g.sys, g.self
	g.timer = time.AfterFunc(g.cfg.ClientLoss/6, func() { sys.Root.Send(self, &tick{}) })
}

// send writes a reply to a client, in chunks when it is large.
func (g *gateway) send(to *actor.PID, rep *wire.Reply) {
	parts, err := wire.Split(rep.Call, rep)
	if err != nil {
		g.log.Error().Err(err).Uint64("call", rep.Call).Msg("reply not encodable")
		parts = []proto.Message{&wire.Reply{Call: rep.Call, Error: wire.ErrorTo(fmt.Errorf("%w: reply not encodable", messages.ErrTransport))}}
	}
	// From the gateway itself: a client accepts only what its host's
	// gateway sends.
	from := remotePID(g.sys, g.self)
	for _, p := range parts {
		g.sys.Root.RequestWithCustomSender(to, p, from)
	}
}

func (g *gateway) fail(to *actor.PID, call uint64, err error) {
	g.send(to, &wire.Reply{Call: call, Error: wire.ErrorTo(err)})
}

// remotePID is pid as clients see it: at the endpoint's address. The
// gateway is spawned before the endpoint starts, so its own PID still
// names the address the system had before (the endpoint sets it before
// it admits the first request, which every reply follows).
func remotePID(sys *actor.ActorSystem, pid *actor.PID) *actor.PID {
	return actor.NewPID(sys.ProcessRegistry.Address, pid.Id)
}

// identity is the TLS identity of the connection a client's message came
// in on, as the endpoint's admission check stamped it; "" without TLS.
func identity(ctx actor.Context) string {
	if h := ctx.MessageHeader(); h != nil {
		return h.Get(endpoint.PeerHeader)
	}
	return ""
}

func (g *gateway) onChunk(ctx actor.Context, c *wire.Chunk, from *actor.PID, id string) {
	// By identity too: chunks from another connection never join these.
	key := id + "/" + from.Address + "/" + from.Id
	a := g.asm[key]
	if a == nil {
		a = wire.NewAssembler(g.cfg.MaxRequestBytes, 16)
		g.asm[key] = a
	}
	data, err := a.Add(c)
	if a.Pending() == 0 {
		delete(g.asm, key)
	}
	switch {
	case err != nil:
		g.fail(from, c.Call, messages.InvalidArgument("%v", err))
	case data != nil:
		var req wire.Request
		if err := proto.Unmarshal(data, &req); err != nil || req.Call != c.Call {
			g.fail(from, c.Call, messages.InvalidArgument("malformed chunked request"))
			return
		}
		g.onRequest(ctx, &req, from, id)
	}
}

// client records that a client was heard. A client is its id as heard
// over one TLS identity: another admitted certificate that names the same
// id is another client, so it can neither keep this one alive with
// heartbeats nor spend its session limit.
func (g *gateway) client(id, identity string) *clientRec {
	key := identity + "/" + id
	c := g.clients[key]
	if c == nil {
		c = &clientRec{id: id, owners: map[digest]*ownerRec{}}
		g.clients[key] = c
	}
	if !c.lostAt.IsZero() {
		g.log.Info().Str("client", id).Msg("client heard again")
	}
	c.seen, c.lostAt = time.Now(), time.Time{}
	return c
}

// auth finds the owner a token names, for a client with the identity
// that opened it; nil for any other token or identity.
func (g *gateway) auth(token, id string) *ownerRec {
	rec := lookup(g.owners, token, func(r *ownerRec) digest { return r.token })
	if rec == nil || rec.identity != id {
		return nil
	}
	return rec
}

// lookup finds the owner whose digest (of key) matches token's, compared
// in constant time; nil for any other token.
func lookup(m map[digest]*ownerRec, token string, key func(*ownerRec) digest) *ownerRec {
	if token == "" {
		return nil
	}
	d := sha256.Sum256([]byte(token))
	rec := m[d]
	if rec == nil {
		return nil
	}
	if k := key(rec); subtle.ConstantTimeCompare(k[:], d[:]) != 1 {
		return nil
	}
	return rec
}

func (g *gateway) onRequest(ctx actor.Context, req *wire.Request, from *actor.PID, id string) {
	if req.Client == "" || len(req.Client) > 64 {
		g.fail(from, req.Call, messages.InvalidArgument("a request needs a client id of at most 64 bytes"))
		return
	}
	c := g.client(req.Client, id)
	switch b := req.Body.(type) {
	case nil:
		g.fail(from, req.Call, messages.InvalidArgument("empty or unknown request"))
		return
	case *wire.Request_Heartbeat:
		g.send(from, &wire.Reply{Call: req.Call, Body: &wire.Reply_Heartbeat{Heartbeat: &wire.HeartbeatReply{}}})
		return
	case *wire.Request_OpenOwner:
		g.openOwner(ctx, req.Call, b.OpenOwner.GetLabel(), id, c, from)
		return
	case *wire.Request_ResumeOwner:
		g.onResume(ctx, req.Call, b.ResumeOwner.GetResumeToken(), id, c, from)
		return
	case *wire.Request_FetchRecording:
		// The client's own, by its identity: no owner's token.
		g.fetchRecording(ctx, req.Call, b.FetchRecording, id, req.Client, from)
		return
	}
	// An unknown token, or one presented by a client with another TLS
	// identity than the owner's, acts as the zero owner, which is live
	// nowhere: the runtime answers it exactly as it answers a stranger on
	// one machine (Spawn: OWNER_NOT_LIVE; a session request: NO_SESSION;
	// List: none).
	rec := g.auth(req.Token, id)
	var o messages.Owner
	if rec != nil {
		o = rec.owner
	}
	if _, ok := req.Body.(*wire.Request_DetachOwner); ok {
		if rec != nil && rec.detachedAt.IsZero() {
			rec.detachedAt = time.Now()
			g.log.Info().Str("owner", rec.owner.Label()).Dur("grace", g.cfg.ClientGrace).Msg("owner detached by its client")
		}
		g.send(from, &wire.Reply{Call: req.Call, Body: &wire.Reply_DetachOwner{DetachOwner: &wire.DetachOwnerReply{}}})
		return
	}
	if cs, ok := req.Body.(*wire.Request_CancelSpawn); ok {
		if rec != nil {
			if ref, ok := rec.spawns[cs.CancelSpawn.GetSpawnCall()]; ok {
				ctx.Send(g.svc.PID(), &protocol.CancelSpawn{Owner: o, Ref: ref, Cause: context.Canceled})
			}
		}
		return
	}
	switch req.Body.(type) {
	case *wire.Request_WatchStart, *wire.Request_WatchAck, *wire.Request_WatchStop:
		g.onWatch(rec, id+"/"+req.Client, req.Call, from, req)
		return
	}
	msg := toProtocol(o, req)
	if msg == nil {
		g.fail(from, req.Call, messages.InvalidArgument("empty or unknown request"))
		return
	}
	sp, spawn := msg.(*protocol.Spawn)
	if spawn && rec != nil && g.cfg.MaxSessionsPerClient > 0 && g.sessionsOf(c) >= g.cfg.MaxSessionsPerClient {
		g.fail(from, req.Call, messages.Errorf(messages.CodeSessionLimit,
			"PTY host: this client already has %d sessions open or starting (the host's limit)", g.cfg.MaxSessionsPerClient))
		return
	}
	r := g.relay(req.Call, from, rec)
	r.session = messages.SessionID(req.Session())
	_, r.isStart = msg.(*protocol.StartSend)
	if spawn && rec != nil {
		// Named by client and call, so a CancelSpawn can find it.
		sp.Ref = fmt.Sprintf("%s/%d", c.id, req.Call)
		rec.spawns[req.Call] = sp.Ref
		r.clientSession = req.GetSpawn().GetClientSession()
	}
	ctx.RequestWithCustomSender(g.svc.PID(), msg, r.pid)
}

// openOwner opens an owner for a client: the runtime's owner, and the two
// secrets the client holds for it (the token of its calls and the resume
// token), kept here only as hashes.
func (g *gateway) openOwner(ctx actor.Context, call uint64, lbl, id string, c *clientRec, from *actor.PID) {
	token, resume := newToken(), newToken()
	rec := &ownerRec{
		owner: messages.NewOwner(label(lbl)), token: sha256.Sum256([]byte(token)), resume: sha256.Sum256([]byte(resume)),
		identity: id, client: c, to: from, spawns: map[uint64]string{}, ids: map[messages.SessionID]string{}, tickets: map[messages.SessionID]uint64{},
	}
	r := g.relay(call, from, nil)
	r.open, r.token, r.resume = rec, token, resume
	ctx.RequestWithCustomSender(g.svc.PID(), &protocol.OpenOwner{Owner: rec.owner}, r.pid)
}

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

// forget drops an owner that was disposed.
func (g *gateway) forget(rec *ownerRec) {
	delete(g.owners, rec.token)
	delete(g.resumes, rec.resume)
	delete(rec.client.owners, rec.token)
	for id, o := range g.sessions {
		if o == rec {
			delete(g.sessions, id)
		}
	}
}

func (g *gateway) onSessionEnd(m *sessionEnd) {
	rec := g.sessions[m.id]
	if rec == nil {
		return
	}
	if m.exited == nil {
		if m.recording != nil {
			g.keepRecord(rec, rec.ids[m.id], *m.recording)
		}
		delete(g.sessions, m.id)
		delete(rec.ids, m.id)
		delete(rec.tickets, m.id)
		return
	}
	g.send(rec.to, &wire.Reply{Body: &wire.Reply_SessionExited{SessionExited: &wire.SessionExited{Session: string(m.id), Status: wire.StatusTo(*m.exited)}}})
}

// checkClients marks silent clients lost and disposes the owners of those
// lost for longer than the grace.
func (g *gateway) checkClients() {
	now := time.Now()
	for key, c := range g.clients {
		if c.lostAt.IsZero() {
			if now.Sub(c.seen) > g.cfg.ClientLoss {
				c.lostAt = now
				g.log.Info().Str("client", c.id).Int("owners", len(c.owners)).Dur("grace", g.cfg.ClientGrace).Msg("client lost")
			} else {
				continue
			}
		}
		if now.Sub(c.lostAt) < g.cfg.ClientGrace {
			continue
		}
		for _, rec := range c.owners {
			g.expire(rec)
		}
		delete(g.clients, key)
	}
	for _, rec := range g.owners {
		if !rec.detachedAt.IsZero() && now.Sub(rec.detachedAt) >= g.cfg.ClientGrace {
			g.expire(rec)
		}
	}
}

// expire disposes an owner whose grace ended: its sessions close with the
// same teardown as a local close, and its tokens stop working at once.
func (g *gateway) expire(rec *ownerRec) {
	g.log.Info().Str("owner", rec.owner.Label()).Msg("grace over: disposing the owner")
	r := g.relay(0, nil, rec)
	r.internal = true
	g.sys.Root.RequestWithCustomSender(g.svc.PID(), &protocol.DisposeOwner{Owner: rec.owner}, r.pid)
	g.forget(rec)
}

// onResume hands an owner to the client that presents its resume token:
// a new capability token is minted (the previous client's stops working
// at once), pushes go to the new client, and the owner's grace ends. The
// reply lists its sessions as they are now (List). An unknown resume
// token, or one presented by a client with another TLS identity than the
// client that opened the owner, is answered as an owner that is not live,
// and changes nothing.
func (g *gateway) onResume(ctx actor.Context, call uint64, resume, id string, c *clientRec, from *actor.PID) {
	rec := lookup(g.resumes, resume, func(r *ownerRec) digest { return r.resume })
	if rec == nil || rec.identity != id {
		g.fail(from, call, messages.Errorf(messages.CodeOwnerNotLive, "unknown resume token, or its owner's grace is over"))
		return
	}
	token := newToken()
	delete(g.owners, rec.token)
	delete(rec.client.owners, rec.token)
	rec.token = sha256.Sum256([]byte(token))
	g.owners[rec.token] = rec
	rec.client, rec.to, rec.detachedAt = c, from, time.Time{}
	c.owners[rec.token] = rec
	g.log.Info().Str("owner", rec.owner.Label()).Str("client", c.id).Msg("owner resumed by a client")
	r := g.relay(call, from, rec)
	r.resumed, r.token = rec, token
	ctx.RequestWithCustomSender(g.svc.PID(), &protocol.List{Owner: rec.owner}, r.pid)
}

// newToken mints a secret: 256 random bits.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux ≥ 3.17 and panics otherwise
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// gatewaySupervisor resumes the gateway after a panic (its maps stay
// valid: each handler changes them last) and answers the request it
// failed on, so no client waits for a reply that cannot come.
type gatewaySupervisor struct{ g *gateway }

func (s *gatewaySupervisor) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	s.g.log.Error().Interface("panic", reason).Msg("gateway failed on a message; resuming it")
	if _, msg, sender := actor.UnwrapEnvelope(message); sender != nil {
		if req, ok := msg.(*wire.Request); ok {
			sys.Root.RequestWithCustomSender(sender, &wire.Reply{Call: req.Call, Error: wire.ErrorTo(fmt.Errorf("%w: the host failed on this request", messages.ErrTransport))}, remotePID(sys, child))
		}
	}
	sup.ResumeChildren(child)
}

// sessionsOf counts a client's sessions: published, and spawns in flight.
func (g *gateway) sessionsOf(c *clientRec) int {
	n := 0
	for _, rec := range g.sessions {
		if rec.client == c {
			n++
		}
	}
	for _, rec := range c.owners {
		n += len(rec.spawns)
	}
	return n
}
