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
	r, err := ask[*lookupReply](ctx, s.sys, s.pid, &lookupSession{owner: owner, id: id})
	if err != nil || r.pid == nil {
		return s.pid
	}
	s.routes.Store(k, r.pid)
	return r.pid
}

// askSession sends a session-scoped request along the route cache, falling
// back to the service when the cached actor has stopped.
func askSession[R any](ctx context.Context, s *Service, owner messages.Owner, id messages.SessionID, msg any) (R, error) {
	pid := s.route(ctx, owner, id)
	r, err := ask[R](ctx, s.sys, pid, msg)
	if errors.Is(err, errGone) && pid != s.pid {
		s.routes.Delete(routeKey{owner, id})
		r, err = ask[R](ctx, s.sys, s.pid, msg)
	}
	if errors.Is(err, errGone) {
		err = messages.NoSession(id)
	}
	return r, err
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
// corresponding protocol message (see protocol.go) and waits for
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
	ta := newTasksActor(s, opts.Clock, log)
	s.tasksWG = ta.wg
	if s.tasks, err = sys.Root.SpawnNamed(props(ta).Configure(resume), "ptyactor-tasks"); err != nil {
		return nil, fmt.Errorf("ptyactor: spawn tasks actor: %w", err)
	}
	return s, nil
}

// PID is the service actor. Integrations may drive the runtime by sending it
// the request messages of protocol.go (RegisterBackend, Spawn, StartSend, ...).
func (s *Service) PID() *actor.PID { return s.pid }

// System is the actor system the service runs on; lifecycle events
// (messages.Event*) are published on its EventStream.
func (s *Service) System() *actor.ActorSystem { return s.sys }

// Config is the validated configuration.
func (s *Service) Config() messages.Config { return s.cfg }

// RegisterBackend adds a backend; the returned function removes it again
// (its sessions survive).
func (s *Service) RegisterBackend(ctx context.Context, b backend.Backend) (func(), error) {
	r, err := ask[*RegisterBackendReply](ctx, s.sys, s.pid, &RegisterBackend{Backend: b})
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	typ := b.Type()
	return func() {
		_, _ = ask[*UnregisterBackendReply](context.Background(), s.sys, s.pid, &UnregisterBackend{Type: typ})
	}, nil
}

// ListBackends returns the registered types in registration order.
func (s *Service) ListBackends(ctx context.Context) ([]string, error) {
	r, err := ask[*ListBackendsReply](ctx, s.sys, s.pid, &ListBackends{})
	if err != nil {
		return nil, err
	}
	return r.Types, nil
}

// NewOwner mints a live owner identity.
func (s *Service) NewOwner(ctx context.Context, label string) (messages.Owner, error) {
	o := messages.NewOwner(label)
	r, err := ask[*OpenOwnerReply](ctx, s.sys, s.pid, &OpenOwner{Owner: o})
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
	msg := &Spawn{Owner: owner, Request: req, Ref: fmt.Sprintf("spawn-%d", s.spawnRefs.Add(1))}
	if ctx.Err() != nil {
		msg.Cancelled = context.Cause(ctx)
	}
	box := newReplyBox(s.sys, 1)
	defer box.close()
	s.sys.Root.RequestWithCustomSender(s.pid, msg, box.pid)
	// Registered after the request went out, so the cancel can never
	// overtake the spawn it names.
	stop := context.AfterFunc(ctx, func() {
		s.sys.Root.Send(s.pid, &CancelSpawn{Owner: owner, Ref: msg.Ref, Cause: context.Cause(ctx)})
	})
	defer stop()
	m, err := box.wait(context.Background())
	if err != nil {
		return nil, err
	}
	r, ok := m.(*SpawnReply)
	if !ok {
		return nil, fmt.Errorf("ptyactor: unexpected reply %T", m)
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return &Session{svc: s, owner: owner, info: r.Result}, nil
}

// Describe returns a session's snapshot now (its current status).
func (s *Service) Describe(ctx context.Context, owner messages.Owner, id messages.SessionID) (messages.Snapshot, error) {
	r, err := askSession[*DescribeReply](ctx, s, owner, id, &Describe{Owner: owner, Session: id})
	if err != nil {
		return messages.Snapshot{}, err
	}
	return r.Snapshot, r.Err
}

// HasOwnerActivity reports whether the owner has a pending spawn, an open
// session, a close in flight or a retained cleanup failure.
func (s *Service) HasOwnerActivity(ctx context.Context, owner messages.Owner) (bool, error) {
	r, err := ask[*HasOwnerActivityReply](ctx, s.sys, s.pid, &HasOwnerActivity{Owner: owner})
	if err != nil {
		return false, err
	}
	return r.Active, nil
}

// SendOp is one reserved send.
type SendOp struct {
	s       *Service
	owner   messages.Owner
	session messages.SessionID
	ticket  uint64
	box     *replyBox
	done    chan struct{}
	res     messages.SendResult
	err     error
}

// StartSend reserves the session's send slot (SEND_ACTIVE while another
// send is unsettled; a settled send whose write or interrupt is still in
// flight is waited for) and starts writing. ctx bounds only the reservation; use Cancel or Send to
// interrupt the send itself.
func (s *Service) StartSend(ctx context.Context, owner messages.Owner, id messages.SessionID, req messages.SendRequest) (*SendOp, error) {
	op, err := s.startSend(ctx, owner, id, req)
	if err != nil {
		return nil, err
	}
	go op.await()
	return op, nil
}

// startSend reserves the slot; the returned op's box receives the
// settlement, which the caller must consume (await, or Send directly).
func (s *Service) startSend(ctx context.Context, owner messages.Owner, id messages.SessionID, req messages.SendRequest) (*SendOp, error) {
	msg := &StartSend{Owner: owner, Session: id, Request: req, NotifySettled: true}
	pid := s.route(ctx, owner, id)
	for {
		box := newReplyBox(s.sys, 2)
		s.sys.Root.RequestWithCustomSender(pid, msg, box.pid)
		// The send actor tells the box directly when it settles, and it
		// may settle before the session's reservation reply arrives: keep a
		// settlement that overtook the reply.
		var early *SendSettled
		m, err := box.wait(ctx)
		if st, ok := m.(*SendSettled); ok && err == nil {
			early = st
			m, err = box.wait(ctx)
		}
		if err == nil {
			r, ok := m.(*StartSendReply)
			switch {
			case !ok:
				err = fmt.Errorf("ptyactor: unexpected reply %T", m)
			case r.Err != nil:
				err = r.Err
			default:
				op := &SendOp{s: s, owner: owner, session: id, ticket: r.Ticket, box: box, done: make(chan struct{})}
				if early != nil {
					box.ch <- early // capacity 2: the reply was taken out
				}
				return op, nil
			}
		}
		box.close()
		if errors.Is(err, errGone) && pid != s.pid {
			s.routes.Delete(routeKey{owner, id})
			pid = s.pid
			continue
		}
		if errors.Is(err, errGone) {
			err = messages.NoSession(id)
		}
		return nil, err
	}
}

// await collects the settlement. It ends when the send settles, which every
// send does (its deadline is always armed), or when the session stops.
func (op *SendOp) await() {
	m, err := op.box.wait(context.Background())
	op.finish(m, err)
}

// finish records the settlement delivered to the op's box.
func (op *SendOp) finish(m any, err error) {
	defer close(op.done)
	defer op.box.close()
	if err != nil {
		op.err = fmt.Errorf("%w: session stopped before the send settled", messages.ErrSessionClosing)
		return
	}
	st, ok := m.(*SendSettled)
	if !ok {
		op.err = fmt.Errorf("ptyactor: unexpected reply %T", m)
		return
	}
	op.res, op.err = st.Result, st.Err
}

// Done is closed when the send settled.
func (op *SendOp) Done() <-chan struct{} { return op.done }

// Ticket names the send in the message protocol.
func (op *SendOp) Ticket() uint64 { return op.ticket }

// Result waits for the settlement (or ctx) and returns it. A settled
// send returns its result even when ctx has ended too.
func (op *SendOp) Result(ctx context.Context) (messages.SendResult, error) {
	select {
	case <-op.done:
		// Checked alone first: with both ready, select would pick at
		// random and could report ctx's cause for a settled send.
		return op.res, op.err
	default:
	}
	select {
	case <-op.done:
		return op.res, op.err
	case <-ctx.Done():
		return messages.SendResult{}, context.Cause(ctx)
	}
}

// ReadOutput returns output produced since the previous call. Once the
// send settled, the rest is in the result's viewport.
func (op *SendOp) ReadOutput(ctx context.Context) (messages.SendRead, error) {
	r, err := askSession[*ReadSendOutputReply](ctx, op.s, op.owner, op.session, &ReadSendOutput{Owner: op.owner, Session: op.session, Ticket: op.ticket})
	if err != nil {
		return messages.SendRead{}, err
	}
	return r.Read, r.Err
}

// Cancel requests cancellation: input not yet written is never written;
// otherwise a real SIGINT goes to the foreground group. It reports false once
// the send settled.
func (op *SendOp) Cancel() bool {
	select {
	case <-op.done:
		return false
	default:
	}
	r, err := askSession[*CancelSendReply](context.Background(), op.s, op.owner, op.session, &CancelSend{Owner: op.owner, Session: op.session, Ticket: op.ticket})
	return err == nil && r.Accepted
}

// Send writes input and waits until the send settles. If ctx ends first the
// send is cancelled (SIGINT if the input was written), Send waits for it to
// settle, and returns that result together with context.Cause(ctx).
func (s *Service) Send(ctx context.Context, owner messages.Owner, id messages.SessionID, req messages.SendRequest) (messages.SendResult, error) {
	if ctx.Err() != nil {
		// Aborted before anything was reserved: nothing is written.
		return messages.SendResult{}, context.Cause(ctx)
	}
	op, err := s.startSend(context.WithoutCancel(ctx), owner, id, req)
	if err != nil {
		return messages.SendResult{}, err
	}
	// Wait on the reply box itself: no goroutine between the settlement
	// and the caller.
	if ctx.Err() != nil {
		op.Cancel()
	}
	var m any
	select {
	case m = <-op.box.ch:
	case <-ctx.Done():
		op.Cancel()
		m = <-op.box.ch
	}
	op.finish(m, nil)
	if ctx.Err() != nil {
		return op.res, context.Cause(ctx)
	}
	return op.res, op.err
}

// Wait waits on a session without writing: until the program reading the
// terminal waits for input, the shell's prompt returns (with its exit
// code), the shell exits, the policy's pattern appears in new output,
// silence (unless NoSilence), or the deadline, whichever comes first. It
// holds the session's one send slot like a send, and a prompt that
// returned since the previous send settled still counts. Cancelling ctx
// ends the wait (no SIGINT: nothing was written).
func (s *Service) Wait(ctx context.Context, owner messages.Owner, id messages.SessionID, policy messages.WaitPolicy) (messages.SendResult, error) {
	return s.Send(ctx, owner, id, messages.SendRequest{Wait: policy})
}

// Screen returns what a session's terminal shows now.
func (s *Service) Screen(ctx context.Context, owner messages.Owner, id messages.SessionID) (messages.Screen, error) {
	r, err := askSession[*ScreenReply](ctx, s, owner, id, &GetScreen{Owner: owner, Session: id})
	if err != nil {
		return messages.Screen{}, err
	}
	return r.Screen, r.Err
}

// Resize sets a session's terminal size: the foreground program gets
// SIGWINCH and redraws; the screen follows.
func (s *Service) Resize(ctx context.Context, owner messages.Owner, id messages.SessionID, rows, cols int) error {
	r, err := askSession[*ResizeReply](ctx, s, owner, id, &Resize{Owner: owner, Session: id, Rows: rows, Cols: cols})
	if err != nil {
		return err
	}
	return r.Err
}

// Read pages retained scrollback (reads work while a session closes).
func (s *Service) Read(ctx context.Context, owner messages.Owner, id messages.SessionID, req messages.ReadRequest) (messages.ReadResult, error) {
	r, err := askSession[*ReadReply](ctx, s, owner, id, &Read{Owner: owner, Session: id, Request: req})
	if err != nil {
		return messages.ReadResult{}, err
	}
	return r.Result, r.Err
}

// Signal sends sig to the terminal's current foreground process group.
func (s *Service) Signal(ctx context.Context, owner messages.Owner, id messages.SessionID, sig messages.Signal) (messages.SignalResult, error) {
	r, err := askSession[*SignalReply](ctx, s, owner, id, &SignalSession{Owner: owner, Session: id, Signal: sig})
	if err != nil {
		return messages.SignalResult{}, err
	}
	return r.Result, r.Err
}

// Kill closes a session and returns once its tree is quiet. closed is false
// when the call joined a close already in flight. A failed close returns a
// *messages.CleanupError; the session stays listed and Kill may be retried.
func (s *Service) Kill(ctx context.Context, owner messages.Owner, id messages.SessionID, reason string) (closed bool, report messages.CloseReport, err error) {
	r, err := askSession[*KillReply](ctx, s, owner, id, &Kill{Owner: owner, Session: id, Reason: reason})
	if err != nil {
		return false, messages.CloseReport{}, err
	}
	if r.Err == nil {
		s.routes.Delete(routeKey{owner, id})
	}
	return r.Closed, r.Report, r.Err
}

// List returns the owner's live sessions in publication order.
func (s *Service) List(ctx context.Context, owner messages.Owner) ([]messages.Snapshot, error) {
	r, err := ask[*ListReply](ctx, s.sys, s.pid, &List{Owner: owner})
	if err != nil {
		return nil, err
	}
	return r.Sessions, nil
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
	r, err := ask[*DisposeOwnerReply](ctx, s.sys, s.pid, &DisposeOwner{Owner: owner})
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
	r, err := ask[*DisposeOwnerReply](ctx, s.sys, s.pid, &serviceShutdown{})
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
