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
	"google.golang.org/protobuf/proto"
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

func (l *hostLink) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		l.sys, l.self = ctx.ActorSystem(), ctx.Self()
		l.gateway = actor.NewPID(l.host.addr, wire.GatewayID)
		l.heard = time.Now()
		l.beat()
		l.arm()
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
		if ro := l.owners[m.owner]; ro != nil {
			ro.proxies[m.pid.Id] = struct{}{}
		}
	case *linkResumeToken:
		l.onResumeToken(m, ctx.Sender())
	case *linkUnpin:
		if ro := l.owners[m.owner]; ro != nil && ro.pinned {
			ro.pinned = false
			l.maybeDispose(ro)
		}
	case *linkDetach:
		l.onDetach(m, ctx.Sender())
	case *linkResume:
		l.onResume(m, ctx.Sender())
	case *linkFetch:
		if l.lost {
			ctx.Respond(&linkReply{call: m.req.Call, err: l.lostErr})
			return
		}
		l.calls[m.req.Call] = &linkPending{replyTo: ctx.Sender()}
		l.send(m.req)
	case *linkUnwatch:
		if w, ok := l.watchers[m.session]; ok && w.pid.Equal(m.pid) {
			delete(l.watchers, m.session)
		}
	case *linkClose:
		l.closing = append(l.closing, ctx.Sender())
		for _, ro := range l.owners {
			if !ro.opening && !l.lost {
				l.dispose(ro.token)
			}
		}
		l.owners = map[messages.Owner]*remoteOwner{}
		l.maybeClosed()
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
		data, err := l.asm.Add(m)
		if err != nil {
			l.log.Error().Err(err).Msg("bad reply chunk from the host")
			l.answer(m.Call, &wire.Reply{Call: m.Call, Error: wire.ErrorTo(fmt.Errorf("%w: %v", messages.ErrTransport, err))})
			return
		}
		if data != nil {
			var rep wire.Reply
			if err := proto.Unmarshal(data, &rep); err != nil || rep.Call != m.Call {
				l.answer(m.Call, &wire.Reply{Call: m.Call, Error: wire.ErrorTo(fmt.Errorf("%w: malformed reply", messages.ErrTransport))})
				return
			}
			l.onReply(&rep)
		}
	}
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

// arm schedules the next tick: twice per heartbeat, so a silence is seen
// at most half a beat after it passed lossAfter.
func (l *hostLink) arm() {
	sys, self := l.sys, l.self
	l.timer = time.AfterFunc(l.every/2, func() { sys.Root.Send(self, &linkTick{}) })
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

func (l *hostLink) beat() {
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forBeat}
	l.lastBeat = time.Now()
	l.send(&wire.Request{Call: call, Body: &wire.Request_Heartbeat{Heartbeat: &wire.Heartbeat{}}})
}

func (l *hostLink) onTick() {
	now := time.Now()
	if l.lost {
		// Is it back? Once a second: each attempt at a dead address
		// holds the library's connection writer for a while.
		if now.Sub(l.lastBeat) >= time.Second {
			l.beat()
		}
		return
	}
	// Before the first answer: the dial's bound on top (a host whose
	// first connection is not made within it is lost then, 3.5 s by
	// default: the library gave up that dial and dropped what waited).
	allow := l.lossAfter
	if !l.everHeard {
		allow += endpoint.DialTimeout
	}
	if silence := now.Sub(l.heard); silence > allow {
		l.lose(fmt.Errorf("%w: %s (%s) silent for %v", messages.ErrHostLost, l.host.name, l.host.addr, silence.Round(time.Millisecond)))
		return
	}
	if now.Sub(l.lastBeat) >= l.every {
		l.beat()
	}
}

func (l *hostLink) onHeard() {
	l.heard, l.everHeard = time.Now(), true
	if l.lost {
		l.lost, l.lostErr = false, nil
		l.host.lost.Store(false)
		l.log.Info().Int("written_off", len(l.writtenOff)).Msg("PTY host answers again; it takes new sessions, and what was written off is disposed there")
		tokens := l.writtenOff
		l.writtenOff = nil
		for _, t := range tokens {
			l.dispose(t)
		}
	}
	for _, h := range l.hellos {
		l.sys.Root.Send(h, &linkHelloReply{})
	}
	l.hellos = nil
}

// lose declares the host lost: every call in flight fails, every proxy on
// it is told, and its host-side owners are written off: disposed there as
// soon as the host answers again (or, if it never hears this client
// again, when its grace for a lost client ends).
func (l *hostLink) lose(err error) {
	l.lost, l.lostErr = true, err
	l.host.lost.Store(true)
	l.log.Warn().Err(err).Int("calls", len(l.calls)).Int("sessions", len(l.watchers)).Msg("PTY host lost")
	l.writeOff()
	l.loseAll(err)
}

// writeOff records what this client leaves on the host it is losing: the
// host-side owners it opened (with their sessions) and the disposes not
// yet answered, to dispose when the host is back; and the opens and
// resumes in flight, whose late reply names an owner to clean up.
// Detached owners are not here: they are the host's grace's already.
func (l *hostLink) writeOff() {
	for _, ro := range l.owners {
		if !ro.opening {
			l.writtenOff = append(l.writtenOff, ro.token)
		}
	}
	for call, p := range l.calls {
		switch p.kind {
		case forDispose:
			l.writtenOff = append(l.writtenOff, p.token)
		case forOpen, forResume:
			l.late[call] = p.kind
		}
	}
}

func (l *hostLink) loseAll(err error) {
	calls := l.calls
	l.calls = map[uint64]*linkPending{}
	for call, p := range calls {
		if p.kind == forCaller {
			l.sys.Root.Send(p.replyTo, &linkReply{call: call, err: err})
		}
		if p.kind == forOpen {
			l.failQueued(p.owner, err)
		}
		if p.kind == forResume {
			l.sys.Root.Send(p.replyTo, &linkResumeReply{err: err})
		}
	}
	for _, w := range l.watchers {
		l.sys.Root.Send(w.pid, &linkLost{err: err})
	}
	l.watchers = map[string]watcher{}
	for _, ro := range l.owners {
		l.failQueued(ro, err)
	}
	l.owners = map[messages.Owner]*remoteOwner{}
	for _, h := range l.hellos {
		l.sys.Root.Send(h, &linkHelloReply{err: err})
	}
	l.hellos = nil
	l.disposes = 0
	l.maybeClosed()
}

func (l *hostLink) failQueued(ro *remoteOwner, err error) {
	if ro == nil {
		return
	}
	for _, c := range ro.queued {
		if c.replyTo != nil {
			l.sys.Root.Send(c.replyTo, &linkReply{call: c.req.Call, err: err})
		}
	}
	ro.queued = nil
	for _, to := range ro.tokenTo {
		l.sys.Root.Send(to, &linkTokenReply{err: err})
	}
	ro.tokenTo = nil
}

func (l *hostLink) onCall(c *linkCall) {
	if l.lost {
		if c.replyTo != nil {
			l.sys.Root.Send(c.replyTo, &linkReply{call: c.req.Call, err: l.lostErr})
		}
		return
	}
	ro := l.owners[c.owner]
	if ro == nil {
		if !c.spawn {
			// No host-side owner: it never had a session here, or its
			// last one ended. The host would say the same.
			l.refuse(c)
			return
		}
		ro = l.open(c.owner)
	}
	if c.spawn {
		ro.proxies[c.replyTo.Id] = struct{}{}
	}
	if ro.opening {
		ro.queued = append(ro.queued, c)
		return
	}
	l.forward(ro, c)
}

// open opens a host-side owner for o; calls for it queue until the host
// answered.
func (l *hostLink) open(o messages.Owner) *remoteOwner {
	ro := &remoteOwner{owner: o, opening: true, proxies: map[string]struct{}{}}
	l.owners[o] = ro
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forOpen, owner: ro}
	l.send(&wire.Request{Call: call, Body: &wire.Request_OpenOwner{OpenOwner: &wire.OpenOwner{Label: o.Label()}}})
	return ro
}

// onResumeToken answers with the owner's resume token, opening its
// host-side owner first if it has none here, and pins it: the token stays
// valid while the owner lives, with or without sessions here.
func (l *hostLink) onResumeToken(m *linkResumeToken, to *actor.PID) {
	if l.lost {
		l.sys.Root.Send(to, &linkTokenReply{err: l.lostErr})
		return
	}
	ro := l.owners[m.owner]
	if ro == nil {
		ro = l.open(m.owner)
	}
	ro.pinned = true
	if ro.opening {
		ro.tokenTo = append(ro.tokenTo, to)
		return
	}
	l.sys.Root.Send(to, &linkTokenReply{token: ro.resume})
}

// onDetach leaves the owner's sessions to the host's grace: the host is
// told (DetachOwner), this link forgets the host-side owner without
// disposing it, and its proxies hear linkDetached before the caller is
// answered, so the owner's disposal that follows closes them here only.
func (l *hostLink) onDetach(m *linkDetach, to *actor.PID) {
	ro := l.owners[m.owner]
	call := l.host.newCall()
	if ro == nil || ro.opening || l.lost {
		l.sys.Root.Send(to, &linkReply{call: call, rep: &wire.Reply{Call: call}})
		return
	}
	delete(l.owners, m.owner)
	for id, w := range l.watchers {
		if w.owner == m.owner {
			l.sys.Root.Send(w.pid, &linkDetached{})
			delete(l.watchers, id)
		}
	}
	l.calls[call] = &linkPending{replyTo: to, owner: ro}
	l.send(&wire.Request{Call: call, Token: ro.token, Body: &wire.Request_DetachOwner{DetachOwner: &wire.DetachOwner{}}})
}

// onResume reattaches a host-side owner by its resume token: the host
// answers with a new capability token and the sessions, which the
// caller adopts (each proxy takes a reference with linkRetain). The
// owner is pinned, as after linkResumeToken: its token stays the same.
func (l *hostLink) onResume(m *linkResume, to *actor.PID) {
	switch {
	case l.lost:
		l.sys.Root.Send(to, &linkResumeReply{err: l.lostErr})
		return
	case l.owners[m.owner] != nil:
		l.sys.Root.Send(to, &linkResumeReply{err: messages.InvalidArgument("the owner already has sessions on PTY host %q", l.host.name)})
		return
	}
	ro := &remoteOwner{owner: m.owner, opening: true, resume: m.token, pinned: true, proxies: map[string]struct{}{}}
	l.owners[m.owner] = ro
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forResume, replyTo: to, owner: ro}
	l.send(&wire.Request{Call: call, Body: &wire.Request_ResumeOwner{ResumeOwner: &wire.ResumeOwner{ResumeToken: m.token}}})
}

func (l *hostLink) forward(ro *remoteOwner, c *linkCall) {
	if c.replyTo != nil {
		l.calls[c.req.Call] = &linkPending{replyTo: c.replyTo, multi: c.multi, owner: ro}
	}
	c.req.Token = ro.token
	l.send(c.req)
}

// refuse answers a call for an owner that has no host-side owner, as the
// host answers an unknown token.
func (l *hostLink) refuse(c *linkCall) {
	if c.replyTo == nil {
		return
	}
	rep := &wire.Reply{Call: c.req.Call}
	switch b := c.req.Body.(type) {
	case *wire.Request_List:
		rep.Body = &wire.Reply_List{List: &wire.ListReply{}}
	case *wire.Request_DisposeOwner:
		rep.Body = &wire.Reply_DisposeOwner{DisposeOwner: &wire.DisposeOwnerReply{}}
	case *wire.Request_CancelSend:
		rep.Body = &wire.Reply_CancelSend{CancelSend: &wire.CancelSendReply{}}
	default:
		_ = b
		rep.Error = wire.ErrorTo(messages.NoSession(messages.SessionID(c.req.Session())))
	}
	l.sys.Root.Send(c.replyTo, &linkReply{call: c.req.Call, rep: rep})
}

// release gives back the reference pid took on o's host-side owner, if
// it holds one on the current one.
func (l *hostLink) release(o messages.Owner, pid *actor.PID) {
	ro := l.owners[o]
	if ro == nil {
		return
	}
	if _, ok := ro.proxies[pid.Id]; !ok {
		return
	}
	delete(ro.proxies, pid.Id)
	l.maybeDispose(ro)
}

// maybeDispose disposes an opened host-side owner nothing holds any more.
func (l *hostLink) maybeDispose(ro *remoteOwner) {
	if ro.opening || ro.used() || l.owners[ro.owner] != ro {
		return
	}
	delete(l.owners, ro.owner)
	l.dispose(ro.token)
}

// dispose ends the host-side owner whose capability token is token (one
// whose last session ended, or one written off); while the host is lost,
// it waits for the host to answer again.
func (l *hostLink) dispose(token string) {
	if l.lost {
		l.writtenOff = append(l.writtenOff, token)
		return
	}
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forDispose, token: token}
	l.disposes++
	l.send(&wire.Request{Call: call, Token: token, Body: &wire.Request_DisposeOwner{DisposeOwner: &wire.DisposeOwner{}}})
}

// onLate handles the reply to a call that was in flight when the host was
// lost, if it left something on the host: an owner opened for this client
// is disposed (nothing here uses it: its spawns failed with the loss); an
// owner resumed for it is detached, back to the host's grace, so that the
// resume can be tried again with the same resume token.
func (l *hostLink) onLate(call uint64, rep *wire.Reply) {
	kind, ok := l.late[call]
	if !ok {
		return
	}
	delete(l.late, call)
	switch kind {
	case forOpen:
		if t := rep.GetOpenOwner().GetToken(); t != "" {
			l.dispose(t)
		}
	case forResume:
		if t := rep.GetResumeOwner().GetToken(); t != "" {
			l.send(&wire.Request{Call: l.host.newCall(), Token: t, Body: &wire.Request_DetachOwner{DetachOwner: &wire.DetachOwner{}}})
		}
	}
}

func (l *hostLink) maybeClosed() {
	if l.disposes > 0 {
		return
	}
	for _, c := range l.closing {
		l.sys.Root.Send(c, &linkClosed{})
	}
	l.closing = nil
}

func (l *hostLink) onReply(rep *wire.Reply) {
	if rep.Call == 0 {
		l.onPush(rep)
		return
	}
	l.answer(rep.Call, rep)
}

func (l *hostLink) answer(call uint64, rep *wire.Reply) {
	p := l.calls[call]
	if p == nil {
		l.onLate(call, rep)
		return
	}
	final := !p.multi || rep.GetSendSettled() != nil || rep.Body == nil || rep.GetWatchBatch().GetLast()
	if final {
		delete(l.calls, call)
	}
	switch p.kind {
	case forBeat:
	case forOpen:
		ro := p.owner
		ro.opening = false
		if err := wire.ErrorFrom(rep.Error); err != nil || rep.GetOpenOwner() == nil {
			if err == nil {
				err = fmt.Errorf("%w: malformed open-owner reply", messages.ErrTransport)
			}
			l.failQueued(ro, err)
			if l.owners[ro.owner] == ro {
				delete(l.owners, ro.owner)
			}
			return
		}
		ro.token, ro.resume = rep.GetOpenOwner().GetToken(), rep.GetOpenOwner().GetResumeToken()
		l.opened(ro)
		// Every spawn that wanted it may have given up meanwhile.
		l.maybeDispose(ro)
	case forResume:
		ro := p.owner
		ro.opening = false
		res := rep.GetResumeOwner()
		err := wire.ErrorFrom(rep.Error)
		if err == nil && res == nil {
			err = fmt.Errorf("%w: malformed resume reply", messages.ErrTransport)
		}
		if err != nil {
			l.failQueued(ro, err)
			if l.owners[ro.owner] == ro {
				delete(l.owners, ro.owner)
			}
			l.sys.Root.Send(p.replyTo, &linkResumeReply{err: err})
			return
		}
		ro.token = res.GetToken()
		l.opened(ro)
		l.sys.Root.Send(p.replyTo, &linkResumeReply{sessions: res.GetSessions()})
	case forDispose:
		l.disposes--
		l.maybeClosed()
	default:
		l.sys.Root.Send(p.replyTo, &linkReply{call: call, rep: rep})
	}
}

// opened sends what waited for a host-side owner to open.
func (l *hostLink) opened(ro *remoteOwner) {
	q := ro.queued
	ro.queued = nil
	for _, c := range q {
		l.forward(ro, c)
	}
	for _, to := range ro.tokenTo {
		l.sys.Root.Send(to, &linkTokenReply{token: ro.resume})
	}
	ro.tokenTo = nil
}

func (l *hostLink) onPush(rep *wire.Reply) {
	if ex := rep.GetSessionExited(); ex != nil {
		if w, ok := l.watchers[ex.GetSession()]; ok {
			l.sys.Root.Send(w.pid, &linkExited{status: wire.StatusFrom(ex.GetStatus())})
		}
	}
	if cc := rep.GetControlChanged(); cc != nil {
		if w, ok := l.watchers[cc.GetSession()]; ok {
			l.sys.Root.Send(w.pid, &linkControl{control: wire.ControlFrom(cc.GetControl()), handback: wire.HandbackFrom(cc.GetHandback())})
		}
	}
}
