package actors_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestService is a service on scripted backends' timings with backends
// registered, and one owner.
func newTestService(t *testing.T, backends ...backend.Backend) (*Service, messages.Owner) {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testkit.Config(), Backends: backends})
	return svc, testkit.Owner(t, svc, "test")
}

// sleeper is a faulty.Responder: "sleep" runs until a SIGINT (or the test's
// Finish) ends it; any other line echoes and exits 0.
func sleeper(line string) faulty.Reply {
	if line == "sleep" {
		return faulty.Reply{Running: true}
	}
	return faulty.Echo(line)
}

// promptingSession opens one session on b, whose sessions print a prompt at
// once; tests script faults on the returned fake afterwards.
func promptingSession(t *testing.T, b *faulty.Backend) (*Service, messages.Owner, *Session, *faulty.Session) {
	t.Helper()
	svc, o := newTestService(t, b)
	sp, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ss := b.Sessions()
	return svc, o, sp, ss[len(ss)-1]
}

// cancelSleep starts "sleep" on sp (a session of b, fs its fake, with
// sleeper's replies), cancels the send once it is written, and returns
// when the cancel's SIGINT reached the backend.
func cancelSleep(t *testing.T, b *faulty.Backend, fs *faulty.Session, sp *Session) *SendOp {
	t.Helper()
	op, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the write", func() bool { return len(fs.Writes()) == 1 })
	if !op.Cancel() {
		t.Fatal("cancel refused")
	}
	if err := b.Entered(testkit.Ctx(t), faulty.OpSignal, 1); err != nil {
		t.Fatal(err)
	}
	return op
}

var errInjected = errors.New("injected fault")

func TestBackendRegistry(t *testing.T) {
	svc, _ := newTestService(t, faulty.New("a"), faulty.New("b"))
	if _, err := svc.RegisterBackend(testkit.Ctx(t), faulty.New("a")); !errors.Is(err, messages.ErrDuplicateBackend) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := svc.RegisterBackend(testkit.Ctx(t), faulty.New("")); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("empty type: %v", err)
	}
	types, _ := svc.ListBackends(testkit.Ctx(t))
	if strings.Join(types, ",") != "a,b" {
		t.Fatalf("types %v", types)
	}
	unreg, err := svc.RegisterBackend(testkit.Ctx(t), faulty.New("c"))
	if err != nil {
		t.Fatal(err)
	}
	unreg()
	types, _ = svc.ListBackends(testkit.Ctx(t))
	if strings.Join(types, ",") != "a,b" {
		t.Fatalf("after unregister %v", types)
	}
}

func TestSpawnCheckOrder(t *testing.T) {
	svc, o := newTestService(t, faulty.New("a"), faulty.New("b"))
	cancelled, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("caller gave up")
	cancel(cause)
	stranger := messages.NewOwner("never opened")

	// Caller aborted comes before owner-not-live and no-backend.
	if _, err := svc.Spawn(cancelled, stranger, messages.SpawnRequest{Type: "zzz"}); err != cause {
		t.Fatalf("aborted: got %v, want the exact cause", err)
	}
	// Owner-not-live comes before no-backend.
	if _, err := svc.Spawn(testkit.Ctx(t), stranger, messages.SpawnRequest{Type: "zzz"}); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("owner: %v", err)
	}
	// No backend before the name check.
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Type: "zzz", Name: " "}); !errors.Is(err, messages.ErrNoBackend) {
		t.Fatalf("backend: %v", err)
	}
	// Two backends: the type is required.
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); !errors.Is(err, messages.ErrNoBackend) {
		t.Fatalf("no type: %v", err)
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Type: "a", Name: " "}); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("blank name: %v", err)
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Type: "a", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Type: "b", Name: "x"}); !errors.Is(err, messages.ErrDuplicateName) {
		t.Fatalf("dup name: %v", err)
	}
	// Disposing comes first of all.
	if err := svc.Shutdown(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestSpawnAfterShutdownIsServiceDisposing(t *testing.T) {
	svc, err := NewService(Options{Config: testkit.Config()})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := svc.NewOwner(testkit.Ctx(t), "x")
	// Drive the shutdown through the protocol but keep the actor alive to
	// observe the refusal.
	if err := ShutdownActor(testkit.Ctx(t), svc); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := svc.Spawn(cancelled, o, messages.SpawnRequest{}); !errors.Is(err, messages.ErrServiceDisposing) {
		t.Fatalf("got %v", err)
	}
	if err := svc.Shutdown(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestSpawnCancelKeepsCauseAndRollsBack(t *testing.T) {
	b := faulty.New("a")
	// Started, but never ready: the startup wait only ends by cancel.
	b.Script(faulty.OpSpawn, faulty.Silent())
	svc, o := newTestService(t, b)
	cause := errors.New("user pressed stop")
	c, cancel := context.WithCancelCause(context.Background())
	go func() {
		// A silent spawn starts its session whatever its context says.
		if b.Entered(testkit.Ctx(t), faulty.OpSpawn, 1) == nil {
			cancel(cause)
		}
	}()
	_, err := svc.Spawn(c, o, messages.SpawnRequest{})
	if err != cause {
		t.Fatalf("got %v, want exact cause", err)
	}
	if closes, _ := b.Sessions()[0].Closes(); closes != 1 {
		t.Fatalf("rolled back %d times, want 1", closes)
	}
	if active, _ := svc.HasOwnerActivity(testkit.Ctx(t), o); active {
		t.Fatal("owner still active after a rolled-back spawn")
	}
}

func TestStartupFailures(t *testing.T) {
	t.Run("exit", func(t *testing.T) {
		b := faulty.New("a")
		b.Script(faulty.OpSpawn, faulty.Exit(1))
		svc, o := newTestService(t, b)
		if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); !errors.Is(err, messages.ErrStartupExited) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("zero-output silence is a timeout", func(t *testing.T) {
		b := faulty.New("a")
		b.Script(faulty.OpSpawn, faulty.Silent())
		svc, o := newTestService(t, b)
		t0 := time.Now()
		_, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
		if !errors.Is(err, messages.ErrStartupTimeout) {
			t.Fatalf("got %v", err)
		}
		// Silence (250ms) must not have published it: only the deadline.
		if d := time.Since(t0); d < messages.Ms(testkit.Config().TimeoutMs) {
			t.Fatalf("rejected after %s, before the deadline", d)
		}
	})
	t.Run("output then silence publishes", func(t *testing.T) {
		b := faulty.New("a")
		b.Script(faulty.OpSpawn, faulty.Silent())
		svc, o := newTestService(t, b)
		type spawned struct {
			sp  *Session
			err error
		}
		done := make(chan spawned, 1)
		go func() {
			sp, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
			done <- spawned{sp, err}
		}()
		testkit.WaitFor(t, 5*time.Second, "the silent session started", func() bool { return len(b.Sessions()) == 1 })
		b.Sessions()[0].Emit("motd without a marker\n")
		r := <-done
		if r.err != nil || r.sp.Info().Motd != "motd without a marker\n" {
			t.Fatalf("spawn %+v %v", r.sp, r.err)
		}
	})
	t.Run("cleanup failure keeps both errors", func(t *testing.T) {
		b := faulty.New("a")
		b.Script(faulty.OpSpawn, faulty.Exit(1))
		// The startup's rollback fails, and so does the dispose's retry.
		b.Script(faulty.OpClose, faulty.Fail(errInjected), faulty.Fail(errInjected))
		svc, o := newTestService(t, b)
		_, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
		var bce *messages.BackendCleanupError
		if !errors.As(err, &bce) || !errors.Is(err, messages.ErrStartupExited) || !errors.Is(err, errInjected) {
			t.Fatalf("got %v", err)
		}
		if active, _ := svc.HasOwnerActivity(testkit.Ctx(t), o); !active {
			t.Fatal("a retained cleanup failure must keep the owner active")
		}
		if err := svc.DisposeOwner(testkit.Ctx(t), o); !errors.Is(err, errInjected) {
			t.Fatalf("dispose must report the retained failure, got %v", err)
		}
	})
}

func TestOwnerIsolationAndSendActive(t *testing.T) {
	b := faulty.New("a", faulty.WithResponder(sleeper))
	svc, o := newTestService(t, b)
	sp, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Name: "one"})
	if err != nil {
		t.Fatal(err)
	}
	fs := b.Sessions()[0]
	other, _ := svc.NewOwner(testkit.Ctx(t), "other")
	if _, err := svc.Session(other, sp.ID()).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "x"}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("foreign send: %v", err)
	}
	if _, err := svc.Session(other, sp.ID()).Read(testkit.Ctx(t), messages.ReadRequest{}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("foreign read: %v", err)
	}
	if _, err := svc.Session(other, sp.ID()).Close(testkit.Ctx(t), ""); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("foreign kill: %v", err)
	}
	if l, _ := svc.List(testkit.Ctx(t), other); len(l) != 0 {
		t.Fatalf("foreign list %v", l)
	}
	op, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "y"}); !errors.Is(err, messages.ErrSendActive) {
		t.Fatalf("second send: %v", err)
	}
	fs.Emit("done\r\n")
	fs.Finish(7)
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 7 {
		t.Fatalf("result %+v %v", res, err)
	}
}

// A backend call that panics on the send actor's goroutine (its inline
// write) fails that send with a transport error; the session stays usable.
func TestSendPanicSettlesWithErrorAndSessionStaysUsable(t *testing.T) {
	_, _, sp, fs := promptingSession(t, faulty.New("a"))
	fs.Script(faulty.OpTryWrite, faulty.Panic("injected panic in send"))
	_, err := sp.Send(testkit.Ctx(t), messages.SendRequest{Text: "boom", Submit: true})
	if !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("got %v, want a transport error", err)
	}
	// The failed send has settled (Send returned): the session freed the
	// slot before it told the caller (or on the failed actor's Terminated,
	// earlier still), so the next send takes it at once. SEND_ACTIVE here
	// is a regression.
	res, err := sp.Send(testkit.Ctx(t), messages.SendRequest{Text: "ok", Submit: true})
	if errors.Is(err, messages.ErrSendActive) {
		t.Fatalf("send after the failed send settled: %v; its slot must be free", err)
	}
	if err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("after panic: %+v, %v", res, err)
	}
}

func TestCancelBeforeWriteNeverWrites(t *testing.T) {
	_, _, sp, fs := promptingSession(t, faulty.New("a"))
	c, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("stop")
	cancel(cause)
	_, err := sp.Send(c, messages.SendRequest{Text: "rm -rf nothing", Submit: true})
	if err != cause {
		t.Fatalf("got %v, want cause", err)
	}
	writes, sigs := len(fs.Writes()), len(fs.Signals())
	// The write may have won the race with the cancel; if it did, a SIGINT
	// must have followed. If it did not, nothing was written or signalled.
	if writes == 0 && sigs != 0 || writes == 1 && sigs != 1 {
		t.Fatalf("writes=%d signals=%d", writes, sigs)
	}
}

func TestFailedSignalRejectsSend(t *testing.T) {
	_, _, sp, fs := promptingSession(t, faulty.New("a", faulty.WithResponder(sleeper)))
	fs.Script(faulty.OpSignal, faulty.Fail(errInjected))
	op, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the write happened, then cancel.
	testkit.WaitFor(t, 5*time.Second, "the write", func() bool { return len(fs.Writes()) == 1 })
	if !op.Cancel() {
		t.Fatal("cancel refused")
	}
	if _, err := op.Result(testkit.Ctx(t)); !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("got %v", err)
	}
	if op.Cancel() {
		t.Fatal("cancel after settle must report false")
	}
}

// A cancel whose SIGINT finds the foreground group already gone (the
// command finished between the write and the signal) is not a transport
// failure: the shell's prompt settles the send.
func TestCancelAfterGroupExitedSettlesOnPrompt(t *testing.T) {
	b := faulty.New("a", faulty.WithResponder(sleeper))
	_, _, sp, fs := promptingSession(t, b)
	fs.Script(faulty.OpSignal, faulty.Fail(fmt.Errorf("%w: group 7430 exited: %w", messages.ErrNoForeground, syscall.ESRCH)))
	op := cancelSleep(t, b, fs, sp)
	fs.Finish(0) // the shell takes the terminal back
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestKillJoinAndRetryAfterFailure(t *testing.T) {
	svc, o, sp, fs := promptingSession(t, faulty.New("a"))
	// The first close leaves the shell behind; the retry succeeds.
	fs.Script(faulty.OpClose, faulty.Fail(errInjected))
	_, err := sp.Close(testkit.Ctx(t), "")
	var ce *messages.CleanupError
	if !errors.As(err, &ce) || len(ce.Survivors) != 1 {
		t.Fatalf("got %v", err)
	}
	// Still listed, sends refused while closing.
	if l, _ := svc.List(testkit.Ctx(t), o); len(l) != 1 {
		t.Fatalf("list after failed close: %v", l)
	}
	if _, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "x"}); !errors.Is(err, messages.ErrSessionClosing) {
		t.Fatalf("send while closing: %v", err)
	}
	rep, err := sp.Close(testkit.Ctx(t), "")
	closed := !rep.Joined
	if err != nil || !closed {
		t.Fatalf("retry: %v %v", closed, err)
	}
	if l, _ := svc.List(testkit.Ctx(t), o); len(l) != 0 {
		t.Fatalf("list after close: %v", l)
	}
	if _, err := sp.Close(testkit.Ctx(t), ""); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("kill after close: %v", err)
	}
}

// TestMessageDrivenUse drives the runtime with plain actor messages, as an
// integration without the facade would, and watches lifecycle events.
func TestMessageDrivenUse(t *testing.T) {
	svc, err := NewService(Options{Config: testkit.Config()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Shutdown(context.Background()) }()
	sys, pid := svc.System(), svc.PID()
	var mu sync.Mutex
	var events []any
	sub := sys.EventStream.Subscribe(func(e any) {
		switch e.(type) {
		case *protocol.EventSessionOpened, *protocol.EventSendSettled, *protocol.EventSessionClosed:
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	})
	defer sys.EventStream.Unsubscribe(sub)
	req := func(m any) any {
		r, err := sys.Root.RequestFuture(pid, m, 5*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := req(&protocol.RegisterBackend{Backend: faulty.New("shell")}).(*protocol.RegisterBackendReply); r.Err != nil {
		t.Fatal(r.Err)
	}
	o := messages.NewOwner("integration")
	if r := req(&protocol.OpenOwner{Owner: o}).(*protocol.OpenOwnerReply); r.Err != nil {
		t.Fatal(r.Err)
	}
	sp := req(&protocol.Spawn{Owner: o, Request: messages.SpawnRequest{Type: "shell"}}).(*protocol.SpawnReply)
	if sp.Err != nil {
		t.Fatal(sp.Err)
	}
	id := sp.Result.SessionID
	st := req(&protocol.StartSend{Owner: o, Session: id, Request: messages.SendRequest{Text: "hi", Submit: true}}).(*protocol.StartSendReply)
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	done := req(&protocol.AwaitSend{Owner: o, Session: id, Ticket: st.Ticket}).(*protocol.SendSettled)
	if done.Err != nil || done.Result.WaitReason != messages.WaitStdinRead || !strings.Contains(done.Result.Viewport, "hi") {
		t.Fatalf("settled %+v", done)
	}
	k := req(&protocol.Kill{Owner: o, Session: id}).(*protocol.KillReply)
	if k.Err != nil || !k.Closed {
		t.Fatalf("kill %+v", k)
	}
	testkit.WaitFor(t, 5*time.Second, "three lifecycle events", func() bool { mu.Lock(); defer mu.Unlock(); return len(events) >= 3 })
	mu.Lock()
	defer mu.Unlock()
	if _, ok := events[0].(*protocol.EventSessionOpened); !ok {
		t.Fatalf("events %T", events)
	}
}

func TestDisposeOwnerClosesEverything(t *testing.T) {
	b := faulty.New("a")
	svc, o := newTestService(t, b)
	for i := 0; i < 5; i++ {
		if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.DisposeOwner(testkit.Ctx(t), o); err != nil {
		t.Fatal(err)
	}
	if ss := b.Sessions(); len(ss) != 5 {
		t.Fatalf("%d sessions started, want 5", len(ss))
	}
	for _, s := range b.Sessions() {
		if _, closed := s.Closes(); !closed {
			t.Fatal("a session was not closed by dispose")
		}
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("spawn after dispose: %v", err)
	}
}

func TestConfigValidationAtStart(t *testing.T) {
	c := testkit.Config()
	c.HandoffGraceMs = c.PollIntervalMs - 1
	if _, err := NewService(Options{Config: c}); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
}

// A send that settled while its SIGINT is still in flight keeps the slot
// until the signal lands (it must not reach the next send), but the next
// StartSend waits for that instead of failing with SEND_ACTIVE.
func TestStartSendWaitsForADrainingSend(t *testing.T) {
	b := faulty.New("a", faulty.WithResponder(sleeper))
	_, _, sp, fs := promptingSession(t, b)
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	b.Hold(faulty.OpSignal, release) // the SIGINT stays in flight until release
	op := cancelSleep(t, b, fs, sp)
	// The prompt settles the send at once, while the signal is in flight.
	fs.Emit("^C\r\n")
	fs.Finish(130)
	if _, err := op.Result(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	next := make(chan error, 1)
	go func() {
		_, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "next", Submit: true})
		next <- err
	}()
	select {
	case err := <-next:
		t.Fatalf("StartSend answered while the SIGINT was in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-next; err != nil {
		t.Fatalf("StartSend after the drain: %v", err)
	}
}
