package actors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// serviceActor is the root of the tree: the backend registry and the owner
// directory. It answers what it can itself and forwards owner-scoped
// requests, keeping the original sender so replies go straight back.
type serviceActor struct {
	cfg   messages.Config
	clock Clock
	log   zerolog.Logger

	ctx    context.Context // cancelled with ErrServiceDisposing on shutdown
	cancel context.CancelCauseFunc

	backends  []backend.Backend
	room      *roomSlot // where spawns naming a host go (seam.Room); empty: none
	owners    map[messages.Owner]*actor.PID
	disposing bool

	shutdownWaiters []*actor.PID
	shutdownErrs    []error
	shutdownPending int
}

// serviceShutdown disposes every owner, clears the registries and answers
// with *DisposeOwnerReply (joined failures).
type serviceShutdown struct{}

func (s *serviceActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *protocol.RegisterBackend:
		ctx.Respond(&protocol.RegisterBackendReply{Err: s.register(m.Backend)})
	case *protocol.UnregisterBackend:
		ctx.Respond(&protocol.UnregisterBackendReply{Removed: s.unregister(m.Type)})
	case *protocol.ListOwners:
		ctx.Respond(&protocol.ListOwnersReply{Owners: s.ownerList()})
	case *protocol.ListBackends:
		ctx.Respond(&protocol.ListBackendsReply{Types: s.backendTypes()})
	case *protocol.OpenOwner:
		ctx.Respond(&protocol.OpenOwnerReply{Err: s.openOwner(ctx, m.Owner)})
	case *protocol.Spawn:
		s.onSpawn(ctx, m)
	case *protocol.CancelSpawn:
		if pid := s.owners[m.Owner]; pid != nil {
			ctx.Forward(pid)
		}
	case protocol.SessionRequest:
		o, id := m.Target()
		s.forward(ctx, o, messages.NoSession(id))
	case *protocol.List:
		s.forward(ctx, m.Owner, nil)
	case *protocol.HasOwnerActivity:
		s.forward(ctx, m.Owner, nil)
	case *protocol.DisposeOwner:
		s.forward(ctx, m.Owner, nil)
	case *ownerGone:
		if pid := s.owners[m.owner]; pid != nil {
			delete(s.owners, m.owner)
		}
	case *actor.Terminated:
		for o, pid := range s.owners {
			if pid.Equal(m.Who) {
				delete(s.owners, o)
			}
		}
	case *serviceShutdown:
		s.onShutdown(ctx)
	case *injectPanic:
		if m.owner.IsZero() {
			panic("injected fault: service")
		}
		s.forward(ctx, m.owner, messages.ErrOwnerNotLive)
	case *actor.DeadLetterResponse:
		s.onDeadLetter(ctx)
	case *protocol.DisposeOwnerReply:
		s.onOwnerDisposed(ctx, m)
	}
}

// unregister removes the backend of type typ; it reports whether there
// was one.
func (s *serviceActor) unregister(typ string) bool {
	for i, b := range s.backends {
		if b.Type() == typ {
			s.backends = append(s.backends[:i:i], s.backends[i+1:]...)
			return true
		}
	}
	return false
}

// ownerList is the live owners, in the order of their labels (a map's
// order would differ from call to call).
func (s *serviceActor) ownerList() []messages.Owner {
	owners := make([]messages.Owner, 0, len(s.owners))
	for o := range s.owners {
		owners = append(owners, o)
	}
	slices.SortFunc(owners, func(a, b messages.Owner) int { return strings.Compare(a.Label(), b.Label()) })
	return owners
}

// backendTypes is the registered backends' types, in registration order.
func (s *serviceActor) backendTypes() []string {
	types := make([]string, len(s.backends))
	for i, b := range s.backends {
		types[i] = b.Type()
	}
	return types
}

// onDeadLetter counts a shutdown request that found no owner: the service
// requests only ownerShutdown, so that owner had already stopped and
// counts as answered.
func (s *serviceActor) onDeadLetter(ctx actor.Context) {
	if s.disposing && s.shutdownPending > 0 {
		s.shutdownPending--
		s.maybeShutDown(ctx)
	}
}

// onOwnerDisposed counts an owner's answer to the shutdown, keeping its
// error for the service's.
func (s *serviceActor) onOwnerDisposed(ctx actor.Context, m *protocol.DisposeOwnerReply) {
	if m.Err != nil {
		s.shutdownErrs = append(s.shutdownErrs, m.Err)
	}
	s.shutdownPending--
	s.maybeShutDown(ctx)
}

// HandleFailure: an owner actor that panics is stopped; its sessions stop
// with it and tear their trees down, and the owner is forgotten (later
// requests are answered as for an unknown owner). The request it was
// handling is answered with an error wrapping ErrTransport.
func (s *serviceActor) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	s.log.Error().Interface("panic", reason).Msg("owner actor failed; stopping it")
	sup.StopChildren(child)
	answerFailed(sys, message, fmt.Errorf("%w: the owner failed: %v", messages.ErrTransport, reason))
}

func (s *serviceActor) register(b backend.Backend) error {
	if b == nil || b.Type() == "" {
		return messages.InvalidArgument("PTY backend type must be a non-empty string")
	}
	for _, have := range s.backends {
		if have.Type() == b.Type() {
			return messages.Errorf(messages.CodeDuplicateBackend, "PTY backend %q is already registered", b.Type())
		}
	}
	s.backends = append(s.backends, b)
	return nil
}

func (s *serviceActor) openOwner(ctx actor.Context, o messages.Owner) error {
	switch {
	case s.disposing:
		return messages.Errorf(messages.CodeServiceDisposing, "PTY service is disposing")
	case o.IsZero():
		return messages.InvalidArgument("owner must be minted with NewOwner")
	case s.owners[o] != nil:
		return nil
	}
	oa := newOwnerActor(o, s.ctx, s.cfg, s.clock, s.log.With().Str("owner", o.Label()).Logger())
	s.owners[o] = ctx.Spawn(props(oa))
	return nil
}

// onSpawn runs the service's share of the spawn checks, in the documented
// order: disposing, caller aborted, owner live, backend, name.
func (s *serviceActor) onSpawn(ctx actor.Context, m *protocol.Spawn) {
	fail := func(err error) { ctx.Respond(&protocol.SpawnReply{Err: err}) }
	if s.disposing {
		fail(messages.Errorf(messages.CodeServiceDisposing, "PTY service is disposing"))
		return
	}
	if m.Cancelled != nil {
		fail(m.Cancelled)
		return
	}
	ownerPID := s.owners[m.Owner]
	if ownerPID == nil {
		fail(messages.Errorf(messages.CodeOwnerNotLive, "PTY owner is not live"))
		return
	}
	nameErr := checkSpawnName(m)
	if m.Request.Host != "" {
		s.spawnOnHost(ctx, m, ownerPID, nameErr)
		return
	}
	backend, err := s.backendFor(m.Request.Type)
	if err != nil {
		fail(err)
		return
	}
	if nameErr != nil {
		fail(nameErr)
		return
	}
	ctx.RequestWithCustomSender(ownerPID, &ownerSpawn{msg: m, backend: backend, id: newSessionID()}, ctx.Sender())
}

// checkSpawnName checks a spawn's name, when given: it is a label (the one
// rule for a caller's labels, messages.CheckLabel), checked here where
// every spawn passes: the Go API, the tools and a host's gateway alike. An
// adopted session's name was checked when it was spawned.
func checkSpawnName(m *protocol.Spawn) error {
	switch name := m.Request.Name; {
	case name == "":
	case strings.TrimSpace(name) == "":
		return messages.InvalidArgument("PTY session name must be a non-empty string")
	case m.Adopt != nil:
	default:
		return messages.CheckLabel("terminal name", name)
	}
	return nil
}

// spawnOnHost places a spawn on a remote host: its backends are the
// host's business; the host stands where the backend does in the order
// of the checks (so a bad host is refused before a bad name).
func (s *serviceActor) spawnOnHost(ctx actor.Context, m *protocol.Spawn, ownerPID *actor.PID, nameErr error) {
	fail := func(err error) { ctx.Respond(&protocol.SpawnReply{Err: err}) }
	if err := s.checkHost(m.Request.Host); err != nil {
		fail(err)
		return
	}
	if nameErr != nil {
		fail(nameErr)
		return
	}
	place, err := s.room.get().Place(m.Request.Host, m.Adopt)
	if err != nil {
		fail(err)
		return
	}
	id := place.ID()
	if id == "" {
		id = newSessionID()
	}
	ctx.RequestWithCustomSender(ownerPID, &ownerSpawn{msg: m, place: place, id: id}, ctx.Sender())
}

// checkHost says whether a spawn naming host can be placed: by the room,
// or, with none, never.
func (s *serviceActor) checkHost(host string) error {
	switch r := s.room.get(); {
	case r != nil:
		return r.Check(host)
	case host == messages.AnyHost:
		return messages.Errorf(messages.CodeNoHost, "no live PTY host is registered")
	}
	return messages.Errorf(messages.CodeNoHost, "no PTY host registered as %q", host)
}

func (s *serviceActor) backendFor(typ string) (backend.Backend, error) {
	if typ == "" {
		if len(s.backends) == 1 {
			return s.backends[0], nil
		}
		return nil, messages.Errorf(messages.CodeNoBackend, "PTY backend type is required when %d backends are registered", len(s.backends))
	}
	for _, b := range s.backends {
		if b.Type() == typ {
			return b, nil
		}
	}
	return nil, messages.Errorf(messages.CodeNoBackend, "no PTY backend registered for type %q", typ)
}

// forward hands an owner-scoped request to its owner. An unknown owner is
// answered with notFound (or the request's empty reply when nil).
func (s *serviceActor) forward(ctx actor.Context, o messages.Owner, notFound error) {
	if pid := s.owners[o]; pid != nil {
		ctx.Forward(pid)
		return
	}
	ctx.Respond(protocol.Refuse(ctx.Message(), notFound))
}

func (s *serviceActor) onShutdown(ctx actor.Context) {
	s.shutdownWaiters = append(s.shutdownWaiters, ctx.Sender())
	if s.disposing {
		s.maybeShutDown(ctx)
		return
	}
	s.disposing = true
	s.cancel(messages.Errorf(messages.CodeServiceDisposing, "PTY service is disposing"))
	for _, pid := range s.owners {
		ctx.Request(pid, &ownerShutdown{})
		s.shutdownPending++
	}
	s.maybeShutDown(ctx)
}

func (s *serviceActor) maybeShutDown(ctx actor.Context) {
	if !s.disposing || s.shutdownPending > 0 || len(s.shutdownWaiters) == 0 {
		return
	}
	// Registries are cleared even when a close failed.
	s.owners = map[messages.Owner]*actor.PID{}
	s.backends = nil
	err := errors.Join(s.shutdownErrs...)
	for _, w := range s.shutdownWaiters {
		ctx.Send(w, &protocol.DisposeOwnerReply{Err: err})
	}
	s.shutdownWaiters = nil
}

// newSessionID mints an unguessable id: 128 random bits.
func newSessionID() messages.SessionID {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux ≥ 3.17 and panics otherwise
	return messages.SessionID("pty-" + hex.EncodeToString(b[:]))
}
