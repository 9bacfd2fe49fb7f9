package remote

import (
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/remote/internal/endpoint"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// hostLink speaks the wire protocol to one host's gateway. It owns the
// calls in flight (each answered to whoever made it), the host-side owners
// that stand for this client's owners there (opened on the first spawn,
// disposed when their last session ends), and the heartbeat: a host silent
// for lossAfter (before its first answer, lossAfter plus
// endpoint.DialTimeout: the first contact includes the dial) is lost, and
// every pending call and every proxy on it is told at once. A lost host is still asked, once a second, whether it is
// back; when it answers it takes new sessions again, and the host-side
// owners this client wrote off with it are disposed there at once (their
// sessions closed with the host's usual teardown), instead of when the
// host's grace for a lost client ends.
type hostLink struct {
	host      *hostEntry
	client    string
	every     time.Duration
	lossAfter time.Duration
	log       zerolog.Logger

	sys     *actor.ActorSystem
	self    *actor.PID
	gateway *actor.PID

	calls    map[uint64]*linkPending
	owners   map[messages.Owner]*remoteOwner
	watchers map[string]watcher // host session id → proxy
	asm      *wire.Assembler

	heard time.Time
	// everHeard: the host answered at least once. Until then silence
	// is allowed endpoint.DialTimeout more: the first contact includes
	// dialling the host (TCP, TLS, HTTP/2), which the library does
	// while the first heartbeats wait, and which a loaded machine can
	// make longer than the loss timeout.
	everHeard bool
	lost      bool
	lostErr   error
	lastBeat  time.Time
	timer     *time.Timer
	hellos    []*actor.PID
	closing   []*actor.PID // linkClose callers: answered when no dispose is pending
	disposes  int          // DisposeOwner calls in flight

	// writtenOff: the capability tokens of the host-side owners this
	// client wrote off when the host was lost (secrets, never logged);
	// each is disposed on the host as soon as it answers again.
	writtenOff []string
	// late: calls in flight when the host was lost (forOpen, forResume)
	// whose reply, if the host still sends it, hands this client an owner
	// nobody here uses any more.
	late map[uint64]linkInternal
}

type watcher struct {
	pid   *actor.PID
	owner messages.Owner
}

type linkPending struct {
	replyTo *actor.PID
	multi   bool // a StartSend: the reservation, then the settlement
	owner   *remoteOwner
	kind    linkInternal
	token   string // forDispose: the owner's capability token
}

type linkInternal int

const (
	forCaller  linkInternal = iota
	forOpen                 // the link's own OpenOwner
	forDispose              // the link's own DisposeOwner
	forBeat                 // a heartbeat
	forResume               // a ResumeOwner: replyTo hears *linkResumeReply
)

// remoteOwner is the host-side owner that serves one local owner's sessions
// on this host.
type remoteOwner struct {
	owner   messages.Owner
	token   string
	resume  string // the resume token (secret): ResumeOwner presents it
	opening bool
	queued  []*linkCall
	tokenTo []*actor.PID // linkResumeToken callers waiting for the open
	// proxies: the proxies using it (spawning or published), by PID id.
	// A proxy gives back only the reference it took: one written off
	// with a lost host must not release the host-side owner opened for
	// the same owner after the host came back.
	proxies map[string]struct{}
	// pinned: its resume token was handed out, so it outlives its last
	// session (until the owner is disposed or detached) and the token
	// stays valid.
	pinned bool
}

// used: a proxy or the pin still holds it.
func (ro *remoteOwner) used() bool { return len(ro.proxies) > 0 || ro.pinned }

// Messages of the link.
type (
	// linkCall: send req on behalf of owner; replies go to replyTo as
	// *linkReply. A Spawn takes a reference on the owner's host-side owner
	// for replyTo (opening it first); the proxy gives it back with
	// linkRelease.
	linkCall struct {
		owner   messages.Owner
		req     *wire.Request
		replyTo *actor.PID
		multi   bool
		spawn   bool
	}
	linkReply struct {
		call uint64
		rep  *wire.Reply
		err  error // the host was lost (wraps messages.ErrHostLost)
	}
	linkRelease struct {
		owner messages.Owner
		pid   *actor.PID
	}
	linkWatch struct {
		session string
		pid     *actor.PID
		owner   messages.Owner
	}
	// linkRetain: an adopted proxy (of a resumed owner) takes a reference.
	linkRetain struct {
		owner messages.Owner
		pid   *actor.PID
	}
	// linkResumeToken asks for owner's resume token on this host, opening
	// its host-side owner if needed and pinning it. Reply: *linkTokenReply.
	linkResumeToken struct{ owner messages.Owner }
	linkTokenReply  struct {
		token string
		err   error
	}
	// linkUnpin: the owner is disposed; its host-side owner may go with
	// its last session.
	linkUnpin struct{ owner messages.Owner }
	// linkDetach leaves owner's sessions running on the host for its
	// grace; its proxies are told (linkDetached) before the reply
	// (*linkReply) and then close without closing the host's sessions.
	linkDetach   struct{ owner messages.Owner }
	linkDetached struct{}
	// linkResume reattaches the host-side owner of token to owner. Reply:
	// *linkResumeReply.
	linkResume struct {
		owner messages.Owner
		token string
	}
	linkResumeReply struct {
		sessions []*wire.ResumedSession
		err      error
	}
	linkUnwatch struct {
		session string
		pid     *actor.PID
	}
	// linkFetch sends req, a call of this client's own (no owner's
	// token: FetchRecording). Reply: *linkReply.
	linkFetch struct{ req *wire.Request }
	// linkLost tells a proxy its host is lost.
	linkLost struct{ err error }
	// linkExited tells a proxy its session's shell exited on the host.
	linkExited struct{ status messages.SessionStatus }
	// linkControl tells a proxy its session's input changed hands on
	// the host (control.go).
	linkControl struct {
		control  messages.Control
		handback *messages.Handback
	}
	linkHello      struct{}
	linkHelloReply struct{ err error }
	linkClose      struct{}
	linkClosed     struct{}
	linkTick       struct{}
)

func newHostLink(h *hostEntry, client string, every, lossAfter time.Duration, log zerolog.Logger) *hostLink {
	return &hostLink{
		host: h, client: client, every: every, lossAfter: lossAfter,
		log:   log.With().Str("host", h.name).Str("address", h.addr).Logger(),
		calls: map[uint64]*linkPending{}, owners: map[messages.Owner]*remoteOwner{},
		watchers: map[string]watcher{}, asm: wire.NewAssembler(64<<20, 64),
		late: map[uint64]linkInternal{},
	}
}

// Receive routes the link's messages: its own life and heartbeat, the
// calls of the proxies and the service, and the host's replies (checked
// to be the host's by fromHost).
func (l *hostLink) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		l.onStarted(ctx)
	case *actor.Stopping:
		l.timer.Stop()
		l.loseAll(fmt.Errorf("%w: the service is shutting down", messages.ErrHostLost))
	case *linkTick:
		l.onTick()
		l.arm()
	case *linkHello:
		l.hellos = append(l.hellos, ctx.Sender())
	case *linkCall:
		l.onCall(m)
	case *linkRelease:
		l.release(m.owner, m.pid)
	case *linkWatch:
		l.watchers[m.session] = watcher{pid: m.pid, owner: m.owner}
	case *linkRetain:
		l.retain(m.owner, m.pid)
	case *linkResumeToken:
		l.onResumeToken(m, ctx.Sender())
	case *linkUnpin:
		l.unpin(m.owner)
	case *linkDetach:
		l.onDetach(m, ctx.Sender())
	case *linkResume:
		l.onResume(m, ctx.Sender())
	case *linkFetch:
		l.onFetch(ctx, m)
	case *linkUnwatch:
		if w, ok := l.watchers[m.session]; ok && w.pid.Equal(m.pid) {
			delete(l.watchers, m.session)
		}
	case *linkClose:
		l.onClose(ctx.Sender())
	case *wire.Reply:
		if !l.fromHost(ctx) {
			return
		}
		l.onHeard()
		l.onReply(m)
	case *wire.Chunk:
		if !l.fromHost(ctx) {
			return
		}
		l.onHeard()
		l.onChunk(m)
	}
}

// onStarted learns the link's own address and the gateway's, and sends
// the first heartbeat: the dial starts with it.
func (l *hostLink) onStarted(ctx actor.Context) {
	l.sys, l.self = ctx.ActorSystem(), ctx.Self()
	l.gateway = actor.NewPID(l.host.addr, wire.GatewayID)
	l.heard = time.Now()
	l.beat()
	l.arm()
}

// onFetch sends a fetch's request, answered to its sender as a call of
// no owner's (a fetch needs none).
func (l *hostLink) onFetch(ctx actor.Context, m *linkFetch) {
	if l.lost {
		ctx.Respond(&linkReply{call: m.req.Call, err: l.lostErr})
		return
	}
	l.calls[m.req.Call] = &linkPending{replyTo: ctx.Sender()}
	l.send(m.req)
}

// onClose disposes every host-side owner (unless the host is lost: then
// they are its grace's) and answers closer once the disposes are.
func (l *hostLink) onClose(closer *actor.PID) {
	l.closing = append(l.closing, closer)
	for _, ro := range l.owners {
		if !ro.opening && !l.lost {
			l.dispose(ro.token)
		}
	}
	l.owners = map[messages.Owner]*remoteOwner{}
	l.maybeClosed()
}

// fromHost reports whether the wire message being received is the host's,
// and logs it if not. The endpoint admits only messages to a live link,
// each with a sender on the address its connection announced (on the
// connection's own IP) and, with TLS, stamped with the connection's
// identity. The sender must be the gateway at the address this link
// dialled, and with TLS the identity must be the one the client's own
// connection to that address verified: a peer holding another
// certificate of the same CA, or none, is not the host, and neither its
// replies nor its pushes nor its chunks count (not even as a sign of
// life). Without TLS the identity cannot be checked, and the sender's
// address is the peer's word; there the random link ids and call ids
// are what keeps other local processes out.
func (l *hostLink) fromHost(ctx actor.Context) bool {
	sender, got := ctx.Sender(), ""
	if h := ctx.MessageHeader(); h != nil {
		got = h.Get(endpoint.PeerHeader)
	}
	var why string
	switch {
	case sender == nil || sender.Id != wire.GatewayID || !slices.Contains(l.host.from, sender.Address):
		why = "the sender is not the gateway at the dialled address"
	case l.host.tls && got == "":
		why = "no TLS identity"
	case l.host.tls && got != l.host.identity():
		why = "the TLS identity is not the dialled host's"
	default:
		return true
	}
	ev := l.log.Warn().Str("why", why).Str("certificate", got)
	if sender != nil {
		ev = ev.Str("sender", sender.Address+"/"+sender.Id)
	}
	ev.Msgf("PTY host link: a %T not from the host refused", ctx.Message())
	return false
}

// send writes a request to the host, in chunks when it is large.
func (l *hostLink) send(req *wire.Request) {
	req.Client = l.client
	parts, err := wire.Split(req.Call, req)
	if err != nil {
		l.answer(req.Call, &wire.Reply{Call: req.Call, Error: wire.ErrorTo(fmt.Errorf("%w: %v", messages.ErrTransport, err))})
		return
	}
	for _, p := range parts {
		l.sys.Root.RequestWithCustomSender(l.gateway, p, l.self)
	}
}

// maybeClosed answers the closes once no dispose is in flight.
func (l *hostLink) maybeClosed() {
	if l.disposes > 0 {
		return
	}
	for _, c := range l.closing {
		l.sys.Root.Send(c, &linkClosed{})
	}
	l.closing = nil
}
