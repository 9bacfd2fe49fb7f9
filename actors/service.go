package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

type routeKey struct {
	owner messages.Owner
	id    messages.SessionID
}

// route returns the session actor serving (owner, id), or the service when
// it is not known (yet).
func (s *Service) route(ctx context.Context, owner messages.Owner, id messages.SessionID) *actor.PID {
	k := routeKey{owner, id}
	if v, ok := s.routes.Load(k); ok {
		return v.(*actor.PID)
	}
	r, err := ask[*protocol.LookupReply](ctx, s.sys, s.pid, &protocol.LookupSession{Owner: owner, Session: id})
	if err != nil || r.PID == nil {
		return s.pid
	}
	s.routes.Store(k, r.PID)
	return r.PID
}

// Options configures a Service.
type Options struct {
	// Config is the runtime configuration; zero means DefaultConfig.
	Config messages.Config
	// Log receives the runtime's and protoactor's logs; zero means none.
	Log zerolog.Logger
	// Clock drives readiness timers; nil means the system clock.
	Clock Clock
}

// Service is the Go facade over the service actor. Every method sends the
// corresponding protocol message (package actors/protocol) and waits for
// the reply or the caller's context, whichever comes first.
type Service struct {
	sys *actor.ActorSystem
	pid *actor.PID
	cfg messages.Config

	// tasks is the background-send registry (tasks.go); tasksWG joins the
	// goroutines it starts.
	tasks   *actor.PID
	tasksWG *sync.WaitGroup

	// routes caches which actor serves a session, so requests skip the
	// service and owner hops. The session authorizes every request itself;
	// a stale entry (the session stopped) is dropped on its dead letter.
	routes sync.Map // routeKey → *actor.PID

	spawnRefs atomic.Uint64 // names spawns for CancelSpawn

	// room is where spawns naming a host go (seam.Room: the remote
	// client, actors/remote, once attached).
	room *roomSlot
	log  zerolog.Logger

	shutdownOnce sync.Once
	shutdownErr  error
}

// NewService starts a runtime on its own actor system.
func NewService(opts Options) (*Service, error) {
	cfg := opts.Config
	if cfg == (messages.Config{}) {
		cfg = messages.DefaultConfig()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	log := opts.Log
	sys := actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(&slogToZerolog{zl: log})
		}),
		// Short throttle window: its timer goroutine must not outlive a
		// test by a second.
		actor.WithDeadLetterThrottleInterval(10*time.Millisecond),
		actor.WithDeadLetterRequestLogging(false),
	)
	ctx, cancel := context.WithCancelCause(context.Background())
	room := &roomSlot{}
	sa := &serviceActor{cfg: cfg, clock: opts.Clock, log: log, ctx: ctx, cancel: cancel, owners: map[messages.Owner]*actor.PID{}, room: room}
	resume := actor.WithGuardian(&resumeStrategy{log: log}) // a pointer: guardians are keyed by strategy
	pid, err := sys.Root.SpawnNamed(props(sa).Configure(resume), "ptyactor")
	if err != nil {
		return nil, fmt.Errorf("ptyactor: spawn service actor: %w", err)
	}
	s := &Service{sys: sys, pid: pid, cfg: cfg, room: room, log: log}
	sys.Extensions.Register(core{s}) // what a room beside the core finds (seam.CoreOf)
	ta := newTasksActor(s, opts.Clock, log)
	s.tasksWG = ta.wg
	if s.tasks, err = sys.Root.SpawnNamed(props(ta).Configure(resume), "ptyactor-tasks"); err != nil {
		return nil, fmt.Errorf("ptyactor: spawn tasks actor: %w", err)
	}
	return s, nil
}

// PID is the service actor. Integrations may drive the runtime by sending it
// the request messages of package actors/protocol (RegisterBackend, Spawn, StartSend, ...).
func (s *Service) PID() *actor.PID { return s.pid }

// System is the actor system the service runs on; lifecycle events
// (messages.Event*) are published on its EventStream.
func (s *Service) System() *actor.ActorSystem { return s.sys }

// Config is the validated configuration.
func (s *Service) Config() messages.Config { return s.cfg }

// RegisterBackend adds a backend; the returned function removes it again
// (its sessions survive).
func (s *Service) RegisterBackend(ctx context.Context, b backend.Backend) (func(), error) {
	r, err := ask[*protocol.RegisterBackendReply](ctx, s.sys, s.pid, &protocol.RegisterBackend{Backend: b})
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	typ := b.Type()
	return func() {
		_, _ = ask[*protocol.UnregisterBackendReply](context.Background(), s.sys, s.pid, &protocol.UnregisterBackend{Type: typ})
	}, nil
}

// ListBackends returns the registered types in registration order.
func (s *Service) ListBackends(ctx context.Context) ([]string, error) {
	r, err := ask[*protocol.ListBackendsReply](ctx, s.sys, s.pid, &protocol.ListBackends{})
	if err != nil {
		return nil, err
	}
	return r.Types, nil
}

// NewOwner mints a live owner identity.
func (s *Service) NewOwner(ctx context.Context, label string) (messages.Owner, error) {
	o := messages.NewOwner(label)
	r, err := ask[*protocol.OpenOwnerReply](ctx, s.sys, s.pid, &protocol.OpenOwner{Owner: o})
	if err != nil {
		return messages.Owner{}, err
	}
	return o, r.Err
}

// Spawn starts a session and returns a handle once it is ready and
// published. Cancelling ctx cancels the start; the error is then
// context.Cause(ctx), exactly, returned after the backend stopped what it
// had started.
func (s *Service) Spawn(ctx context.Context, owner messages.Owner, req messages.SpawnRequest) (*Session, error) {
	// Cancellation travels as a message: when ctx ends, CancelSpawn names
	// this spawn by its ref. The reply is awaited even after ctx ends: the
	// owner answers with the caller's cause once the rollback finished, so
	// nothing is left behind.
	msg := &protocol.Spawn{Owner: owner, Request: req, Ref: fmt.Sprintf("spawn-%d", s.spawnRefs.Add(1))}
	if ctx.Err() != nil {
		msg.Cancelled = context.Cause(ctx)
	}
	box := newReplyBox(s.sys, 1)
	defer box.Close()
	s.sys.Root.RequestWithCustomSender(s.pid, msg, box.PID)
	// Registered after the request went out, so the cancel can never
	// overtake the spawn it names.
	stop := context.AfterFunc(ctx, func() {
		s.sys.Root.Send(s.pid, &protocol.CancelSpawn{Owner: owner, Ref: msg.Ref, Cause: context.Cause(ctx)})
	})
	defer stop()
	m, err := box.Wait(context.Background())
	if err != nil {
		return nil, err
	}
	r, ok := m.(*protocol.SpawnReply)
	if !ok {
		return nil, fmt.Errorf("ptyactor: unexpected reply %T", m)
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return &Session{svc: s, owner: owner, info: r.Result}, nil
}

// HasOwnerActivity reports whether the owner has a pending spawn, an open
// session, a close in flight or a retained cleanup failure.
func (s *Service) HasOwnerActivity(ctx context.Context, owner messages.Owner) (bool, error) {
	r, err := ask[*protocol.HasOwnerActivityReply](ctx, s.sys, s.pid, &protocol.HasOwnerActivity{Owner: owner})
	if err != nil {
		return false, err
	}
	return r.Active, nil
}

// List returns the owner's live sessions in publication order.
func (s *Service) List(ctx context.Context, owner messages.Owner) ([]messages.Snapshot, error) {
	r, err := ask[*protocol.ListReply](ctx, s.sys, s.pid, &protocol.List{Owner: owner})
	if err != nil {
		return nil, err
	}
	return r.Sessions, nil
}

// Owners lists the service's live owners, for a console that shows every
// session of a server (List each one's sessions).
func (s *Service) Owners(ctx context.Context) ([]messages.Owner, error) {
	r, err := ask[*protocol.ListOwnersReply](ctx, s.sys, s.pid, &protocol.ListOwners{})
	if err != nil {
		return nil, err
	}
	return r.Owners, nil
}

// DisposeOwner ends the owner: new spawns and sends are refused, pending
// spawns are cancelled, every session is closed concurrently, and it returns
// when all of it is quiet, with every cleanup failure (including retained
// ones) joined.
func (s *Service) DisposeOwner(ctx context.Context, owner messages.Owner) error {
	s.routes.Range(func(k, _ any) bool {
		if k.(routeKey).owner == owner {
			s.routes.Delete(k)
		}
		return true
	})
	r, err := ask[*protocol.DisposeOwnerReply](ctx, s.sys, s.pid, &protocol.DisposeOwner{Owner: owner})
	if err != nil {
		if errors.Is(err, errGone) {
			return nil
		}
		return err
	}
	// The owner's sessions are closed, so its tasks have settled: forget
	// them (their ids become unknown).
	_, _ = ask[*tasksOwnerGoneReply](ctx, s.sys, s.tasks, &tasksOwnerGone{owner: owner})
	if r := s.room.get(); r != nil {
		r.OwnerDisposed(owner)
	}
	return r.Err
}

// Shutdown disposes every owner, clears the registries even when a close
// fails, stops the actor tree and returns the joined cleanup failures. It is
// idempotent: later calls return the first call's result. If ctx ends before
// the owners are quiet, it returns the cause and a later call may finish.
func (s *Service) Shutdown(ctx context.Context) error {
	r, err := ask[*protocol.DisposeOwnerReply](ctx, s.sys, s.pid, &serviceShutdown{})
	if err != nil && !errors.Is(err, errGone) {
		return err
	}
	s.shutdownOnce.Do(func() {
		if r != nil {
			s.shutdownErr = r.Err
		}
		if perr := s.sys.Root.PoisonFuture(s.pid).Wait(); perr != nil {
			s.shutdownErr = errors.Join(s.shutdownErr, perr)
		}
		if perr := s.sys.Root.PoisonFuture(s.tasks).Wait(); perr != nil {
			s.shutdownErr = errors.Join(s.shutdownErr, perr)
		}
		s.tasksWG.Wait()
		// Every owner is disposed: the hosts' links end last.
		if r := s.room.get(); r != nil {
			if rerr := r.Close(ctx); rerr != nil {
				s.shutdownErr = errors.Join(s.shutdownErr, rerr)
			}
		}
		s.sys.Shutdown()
	})
	return s.shutdownErr
}
