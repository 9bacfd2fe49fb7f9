package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/actors/internal/seam"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// ownerActor holds one owner's sessions and pending spawns, its dispose
// fence and its retained cleanup failures.
type ownerActor struct {
	owner messages.Owner
	cfg   messages.Config
	clock Clock
	log   zerolog.Logger
	// parent is the service's lifetime: cancelled, with ErrServiceDisposing,
	// the moment the service starts disposing, before its ownerShutdown
	// reaches this mailbox (a broadcast no message order can give).
	parent context.Context
	// abort is the dispose cause once this owner disposes: pending spawns
	// are cancelled with it.
	abort error

	live     bool
	sessions map[messages.SessionID]*sessionRec
	order    []messages.SessionID // publication order
	pending  map[messages.SessionID]*pendingSpawn
	refs     map[string]messages.SessionID // Spawn.Ref → pending spawn
	names    map[string]messages.SessionID
	failures []error // retained cleanup failures, reported by the next dispose

	disposing      bool
	disposeReason  string
	disposeWaiters []*actor.PID
	disposeErrs    []error
}

type sessionRec struct {
	pid    *actor.PID
	snap   messages.Snapshot
	hidden bool // never published: a rolled-back spawn whose close failed
	done   bool // closed, or failed during this dispose round
}

type pendingSpawn struct {
	pid     *actor.PID
	replyTo *actor.PID
	ref     string
	name    string
	// cancelled is the caller's cause, once a CancelSpawn named this spawn.
	cancelled error
	rollback  error // set while the published-too-late session is rolled back
}

func newOwnerActor(owner messages.Owner, parent context.Context, cfg messages.Config, clock Clock, log zerolog.Logger) *ownerActor {
	return &ownerActor{
		owner: owner, cfg: cfg, clock: clock, log: log, parent: parent, live: true,
		sessions: map[messages.SessionID]*sessionRec{},
		pending:  map[messages.SessionID]*pendingSpawn{},
		refs:     map[string]messages.SessionID{},
		names:    map[string]messages.SessionID{},
	}
}

func (o *ownerActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *ownerSpawn:
		o.onSpawn(ctx, m)
	case *protocol.CancelSpawn:
		if id, ok := o.refs[m.Ref]; ok {
			if p := o.pending[id]; p != nil && p.cancelled == nil {
				p.cancelled = m.Cause
				if p.cancelled == nil {
					p.cancelled = context.Canceled
				}
				ctx.Send(p.pid, &seam.CancelSpawn{Cause: p.cancelled})
			}
		}
	case *seam.Started:
		o.onStarted(ctx, m)
	case *seam.StartFailed:
		o.onStartFailed(ctx, m)
	case *seam.StatusChanged:
		if r := o.sessions[m.ID]; r != nil {
			r.snap.Status = m.Status
		}
	case *seam.Closed:
		o.onClosed(ctx, m.ID)
		for _, r := range m.Replies {
			ctx.Send(r.To, r.Reply)
		}
	case *seam.CloseFailed:
		o.onCloseFailed(ctx, m)
	case *seam.OrphanClosed:
		o.onOrphanClosed(ctx, m)

	case protocol.SessionRequest:
		_, id := m.Target()
		if r := o.sessions[id]; r != nil && !r.hidden {
			ctx.Forward(r.pid)
			return
		}
		ctx.Respond(m.Refuse(messages.NoSession(id)))
	case *protocol.List:
		out := make([]messages.Snapshot, 0, len(o.order))
		for _, id := range o.order {
			out = append(out, o.sessions[id].snap)
		}
		ctx.Respond(&protocol.ListReply{Sessions: out})
	case *protocol.HasOwnerActivity:
		ctx.Respond(&protocol.HasOwnerActivityReply{
			Active:   len(o.pending) > 0 || len(o.sessions) > 0 || len(o.failures) > 0,
			Failures: len(o.failures),
		})
	case *protocol.DisposeOwner:
		o.dispose(ctx, messages.ErrOwnerNotLive, "PTY owner disposed")
	case *injectPanic:
		panic("injected fault: owner")
	case *ownerShutdown:
		o.dispose(ctx, messages.ErrServiceDisposing, "PTY service disposed")
	}
}

// HandleFailure: a session actor that panics is stopped, never restarted
// (it owns processes); its Stopping handler tears the tree down. The
// request it was handling is dropped with it, so its sender is answered
// here: a caller that waits without a deadline (Send, Cancel) must not
// wait forever.
func (o *ownerActor) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	o.log.Error().Str("owner", o.owner.Label()).Interface("panic", reason).Msg("session actor failed; stopping it")
	sup.StopChildren(child)
	answerFailed(sys, message, fmt.Errorf("%w: the session failed: %v", messages.ErrTransport, reason))
}

func (o *ownerActor) onSpawn(ctx actor.Context, m *ownerSpawn) {
	if m.place != nil && (!o.live || m.msg.Request.Name != "" && o.names[m.msg.Request.Name] != "") {
		m.place.Release() // refused below: it never reaches the host
	}
	if !o.live {
		ctx.Respond(&protocol.SpawnReply{Err: messages.Errorf(messages.CodeOwnerNotLive, "PTY owner is not live")})
		return
	}
	name := m.msg.Request.Name
	if name != "" {
		if _, dup := o.names[name]; dup {
			ctx.Respond(&protocol.SpawnReply{Err: messages.Errorf(messages.CodeDuplicateName, "PTY session name %q is already in use", name)})
			return
		}
		o.names[name] = m.id
	}
	spec := messages.SpawnSpec{SpawnRequest: m.msg.Request, SessionID: m.id, Owner: o.owner}
	// The one place a session's actor is made: the placement chose this
	// process (a session actor) or a remote host (its proxy).
	var a actor.Actor
	if m.place != nil {
		a = m.place.Actor(spec, seam.Env{Config: o.cfg, Clock: o.clock, Log: o.log.With().Str("session", string(m.id)).Logger()})
	} else {
		spec.Type = m.backend.Type()
		a = &sessionActor{
			id: m.id, owner: o.owner, spec: spec, backend: m.backend,
			cfg: o.cfg, clock: o.clock, log: o.log.With().Str("session", string(m.id)).Logger(),
		}
	}
	pid := ctx.Spawn(props(a))
	p := &pendingSpawn{pid: pid, replyTo: ctx.Sender(), ref: m.msg.Ref, name: name}
	o.pending[m.id] = p
	if p.ref != "" {
		o.refs[p.ref] = m.id
	}
	if o.parent.Err() != nil {
		// The service began disposing while this spawn was on its way.
		ctx.Send(pid, &seam.CancelSpawn{Cause: context.Cause(o.parent)})
	}
}

// spawnError picks what a failed spawn returns: the caller's exact cause,
// else the owner's or service's abort, else the original error.
func (o *ownerActor) spawnError(p *pendingSpawn, err error) error {
	switch {
	case p.cancelled != nil:
		return p.cancelled
	case o.abort != nil:
		return o.abort
	case o.parent.Err() != nil:
		return context.Cause(o.parent)
	}
	return err
}

func (o *ownerActor) onStarted(ctx actor.Context, m *seam.Started) {
	p := o.pending[m.ID]
	if p == nil {
		return
	}
	var err error
	switch {
	case p.cancelled != nil:
		err = p.cancelled
	case o.parent.Err() != nil:
		err = context.Cause(o.parent)
	case !o.live:
		err = messages.Errorf(messages.CodeOwnerNotLive, "PTY owner is not live")
	}
	if err != nil {
		p.rollback = err
		ctx.Send(p.pid, &seam.CloseSession{Reason: "PTY spawn rolled back"})
		return
	}
	o.forgetRef(p)
	delete(o.pending, m.ID)
	o.sessions[m.ID] = &sessionRec{pid: p.pid, snap: m.Result.Snapshot}
	o.order = append(o.order, m.ID)
	ctx.ActorSystem().EventStream.Publish(&protocol.EventSessionOpened{Owner: o.owner, Snapshot: m.Result.Snapshot})
	ctx.Send(p.replyTo, &protocol.SpawnReply{Result: m.Result})
}

func (o *ownerActor) onStartFailed(ctx actor.Context, m *seam.StartFailed) {
	p := o.pending[m.ID]
	if p == nil {
		return
	}
	o.dropPending(m.ID, p)
	var bce *messages.BackendCleanupError
	if errors.As(m.Err, &bce) {
		// The process may still be alive: keep the failure as activity
		// until a dispose reports it.
		o.failures = append(o.failures, m.Err)
	}
	if m.Kept {
		// The session's rollback close failed and it still holds the
		// process: keep it (hidden) so a dispose retries the close and
		// waits for it, as for a published-too-late rollback.
		o.keepHidden(ctx, m.ID, p.pid)
	}
	ctx.Send(p.replyTo, &protocol.SpawnReply{Err: o.spawnError(p, m.Err)})
	o.maybeDisposed(ctx)
}

// keepHidden records a never-published session whose rollback close
// failed, so a dispose retries the close and waits for it. A dispose
// already under way sent its closes before this session was recorded: it
// gets its retry now, or the dispose would wait for it forever.
func (o *ownerActor) keepHidden(ctx actor.Context, id messages.SessionID, pid *actor.PID) {
	o.sessions[id] = &sessionRec{pid: pid, hidden: true, snap: messages.Snapshot{SessionID: id}}
	if o.disposing {
		ctx.Send(pid, &seam.CloseSession{Reason: o.disposeReason})
	}
}

func (o *ownerActor) forgetRef(p *pendingSpawn) {
	if p.ref != "" && o.refs[p.ref] != "" {
		delete(o.refs, p.ref)
	}
}

func (o *ownerActor) dropPending(id messages.SessionID, p *pendingSpawn) {
	o.forgetRef(p)
	delete(o.pending, id)
	if p.name != "" && o.names[p.name] == id {
		delete(o.names, p.name)
	}
}

func (o *ownerActor) onClosed(ctx actor.Context, id messages.SessionID) {
	if p := o.pending[id]; p != nil && p.rollback != nil {
		o.dropPending(id, p)
		ctx.Send(p.replyTo, &protocol.SpawnReply{Err: p.rollback})
		o.maybeDisposed(ctx)
		return
	}
	o.removeSession(id)
	o.maybeDisposed(ctx)
}

func (o *ownerActor) removeSession(id messages.SessionID) {
	r := o.sessions[id]
	if r == nil {
		return
	}
	delete(o.sessions, id)
	for i, v := range o.order {
		if v == id {
			o.order = append(o.order[:i], o.order[i+1:]...)
			break
		}
	}
	if r.snap.Name != "" && o.names[r.snap.Name] == id {
		delete(o.names, r.snap.Name)
	}
}

func (o *ownerActor) onCloseFailed(ctx actor.Context, m *seam.CloseFailed) {
	if p := o.pending[m.ID]; p != nil && p.rollback != nil {
		// The rollback failed: the session stays (hidden) so a dispose can
		// retry, and the failure stays as activity.
		o.dropPending(m.ID, p)
		o.keepHidden(ctx, m.ID, p.pid)
		o.failures = append(o.failures, m.Err)
		err := p.rollback
		if p.cancelled == nil {
			err = errors.Join(errors.New("PTY spawn and rollback both failed"), p.rollback, m.Err)
		}
		ctx.Send(p.replyTo, &protocol.SpawnReply{Err: err})
		o.maybeDisposed(ctx)
		return
	}
	if o.disposing {
		if r := o.sessions[m.ID]; r != nil {
			r.done = true
		}
		o.disposeErrs = append(o.disposeErrs, m.Err)
		o.maybeDisposed(ctx)
	}
}

// onOrphanClosed: a session actor stopped without a close (a failure) and
// its Stopping handler finished tearing the tree down. Until this arrives
// the session stays recorded, so the owner stays active and a dispose waits.
// (Its Terminated is not used: system messages overtake the session's last
// reports.)
func (o *ownerActor) onOrphanClosed(ctx actor.Context, m *seam.OrphanClosed) {
	if m.Err != nil {
		o.failures = append(o.failures, m.Err)
	}
	if p := o.pending[m.ID]; p != nil {
		o.dropPending(m.ID, p)
		ctx.Send(p.replyTo, &protocol.SpawnReply{Err: o.spawnError(p, errors.New("PTY session actor failed during startup"))})
	}
	o.removeSession(m.ID)
	o.maybeDisposed(ctx)
}

// dispose closes the registration, cancels pending spawns (they answer with
// their caller's or this cause), closes every session concurrently, and
// answers once all of it is quiet.
func (o *ownerActor) dispose(ctx actor.Context, cause error, reason string) {
	if ctx.Sender() != nil {
		o.disposeWaiters = append(o.disposeWaiters, ctx.Sender())
	}
	if o.disposing {
		return
	}
	o.disposing, o.live, o.disposeReason = true, false, reason
	o.abort = cause
	for _, p := range o.pending {
		if p.cancelled == nil {
			ctx.Send(p.pid, &seam.CancelSpawn{Cause: cause})
		}
	}
	for _, r := range o.sessions {
		ctx.Send(r.pid, &seam.CloseSession{Reason: reason})
	}
	o.maybeDisposed(ctx)
}

func (o *ownerActor) maybeDisposed(ctx actor.Context) {
	if !o.disposing || len(o.pending) > 0 {
		return
	}
	for _, r := range o.sessions {
		if !r.done {
			return
		}
	}
	err := errors.Join(append(o.failures, o.disposeErrs...)...)
	o.failures, o.disposeErrs = nil, nil
	// The service hears first: a caller that disposes and then shuts the
	// service down must find this owner gone. The other way round, its
	// shutdown could reach the service before ownerGone and ask this
	// (stopped) owner for a reply that never comes.
	ctx.Send(ctx.Parent(), &ownerGone{owner: o.owner})
	for _, w := range o.disposeWaiters {
		ctx.Send(w, &protocol.DisposeOwnerReply{Err: err})
	}
	o.disposeWaiters = nil
	// Poison, not Stop: requests queued behind the dispose still get their
	// (refusing) answers.
	ctx.Poison(ctx.Self())
}
