package host

import (
	"context"
	"crypto/sha256"
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

// Receive routes the gateway's messages: its own life and tick, the
// clients' requests (whole or in chunks), the relays' replies and the
// runtime's session events.
func (g *gateway) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		g.sys, g.self = ctx.ActorSystem(), ctx.Self()
		g.subscribe()
		g.arm()
	case *actor.Stopping:
		g.onStopping()
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
		g.onControlChanged(m)
	case *tick:
		g.checkClients()
		g.expireRecords(time.Now())
		g.arm()
	}
}

// subscribe has the runtime's session events sent to the gateway as its
// own messages: the ends and control changes of the sessions it relays
// are pushed to their clients.
func (g *gateway) subscribe() {
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
}

// onStopping ends what the gateway started: the subscription, the timer,
// the relays in flight and the watches' pushers.
func (g *gateway) onStopping() {
	g.sys.EventStream.Unsubscribe(g.sub)
	g.timer.Stop()
	for r := range g.relays {
		g.drop(r)
	}
	for _, p := range g.watches {
		p.cancel()
	}
}

// onControlChanged tells the session's client, as of an exit: a
// take-over, a hand-back (an idle one too).
func (g *gateway) onControlChanged(m *protocol.EventControlChanged) {
	if rec := g.sessions[m.Session]; rec != nil {
		g.send(rec.to, &wire.Reply{Body: &wire.Reply_ControlChanged{ControlChanged: &wire.ControlChanged{
			Session: string(m.Session), Control: wire.ControlTo(m.Control), Handback: wire.HandbackTo(m.Handback)}}})
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

// onRequest answers a client's request: first those of the client itself
// (clientRequest), then, by the owner its token names, those the gateway
// answers itself and those it relays to the runtime (relayRequest).
func (g *gateway) onRequest(ctx actor.Context, req *wire.Request, from *actor.PID, id string) {
	if req.Client == "" || len(req.Client) > 64 {
		g.fail(from, req.Call, messages.InvalidArgument("a request needs a client id of at most 64 bytes"))
		return
	}
	c := g.client(req.Client, id)
	if g.clientRequest(ctx, req, c, from, id) {
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
	switch b := req.Body.(type) {
	case *wire.Request_DetachOwner:
		g.onDetach(rec, req.Call, from)
	case *wire.Request_CancelSpawn:
		if rec != nil {
			if ref, ok := rec.spawns[b.CancelSpawn.GetSpawnCall()]; ok {
				ctx.Send(g.svc.PID(), &protocol.CancelSpawn{Owner: o, Ref: ref, Cause: context.Canceled})
			}
		}
	case *wire.Request_WatchStart, *wire.Request_WatchAck, *wire.Request_WatchStop:
		g.onWatch(rec, id+"/"+req.Client, req.Call, from, req)
	default:
		g.relayRequest(ctx, req, o, rec, c, from)
	}
}

// clientRequest answers the requests of the client itself, which name no
// owner's token; it reports whether req was one.
func (g *gateway) clientRequest(ctx actor.Context, req *wire.Request, c *clientRec, from *actor.PID, id string) bool {
	switch b := req.Body.(type) {
	case nil:
		g.fail(from, req.Call, messages.InvalidArgument("empty or unknown request"))
	case *wire.Request_Heartbeat:
		g.send(from, &wire.Reply{Call: req.Call, Body: &wire.Reply_Heartbeat{Heartbeat: &wire.HeartbeatReply{}}})
	case *wire.Request_OpenOwner:
		g.openOwner(ctx, req.Call, b.OpenOwner.GetLabel(), id, c, from)
	case *wire.Request_ResumeOwner:
		g.onResume(ctx, req.Call, b.ResumeOwner.GetResumeToken(), id, c, from)
	case *wire.Request_FetchRecording:
		// The client's own, by its identity: no owner's token.
		g.fetchRecording(ctx, req.Call, b.FetchRecording, id, req.Client, from)
	default:
		return false
	}
	return true
}

// relayRequest maps a request to the runtime's message and asks the
// service through a relay, which answers the client; a spawn counts
// against the client's session limit and is named so that a CancelSpawn
// finds it.
func (g *gateway) relayRequest(ctx actor.Context, req *wire.Request, o messages.Owner, rec *ownerRec, c *clientRec, from *actor.PID) {
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
