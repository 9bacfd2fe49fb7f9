package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a service with one faulty backend and one owner, and a record of
// the settlements the service published.
type rig struct {
	t     *testing.T
	svc   *actors.Service
	b     *faulty.Backend
	owner messages.Owner

	mu      sync.Mutex
	settled map[messages.SessionID][]protocol.EventSendSettled
}

func newRig(t *testing.T, b *faulty.Backend) *rig {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testkit.Config(), Tolerate: []error{errInjected}})
	r := &rig{t: t, svc: svc, b: b, settled: map[messages.SessionID][]protocol.EventSendSettled{}}
	sub := svc.System().EventStream.Subscribe(func(e any) {
		if ev, ok := e.(*protocol.EventSendSettled); ok {
			r.mu.Lock()
			r.settled[ev.Session] = append(r.settled[ev.Session], *ev)
			r.mu.Unlock()
		}
	})
	t.Cleanup(func() { svc.System().EventStream.Unsubscribe(sub) }) // before the Shutdown
	if _, err := svc.RegisterBackend(testkit.Ctx(t), b); err != nil {
		t.Fatal(err)
	}
	r.owner = testkit.Owner(t, svc, "faulty-test")
	return r
}

// spawn starts a session that must come up.
func (r *rig) spawn() (messages.SessionID, *faulty.Session) {
	r.t.Helper()
	res, err := r.svc.Spawn(testkit.Ctx(r.t), r.owner, messages.SpawnRequest{})
	if err != nil {
		r.t.Fatalf("spawn: %v", err)
	}
	ss := r.b.Sessions()
	return res.ID(), ss[len(ss)-1]
}

// activity asks the owner through the protocol, which also counts the
// retained cleanup failures.
func (r *rig) activity() protocol.HasOwnerActivityReply {
	r.t.Helper()
	res, err := r.svc.System().Root.RequestFuture(r.svc.PID(), &protocol.HasOwnerActivity{Owner: r.owner}, 10*time.Second).Result()
	if err != nil {
		r.t.Fatalf("owner activity: %v", err)
	}
	return *res.(*protocol.HasOwnerActivityReply)
}

// settlements returns how many sends of id settled, once n did (or fails
// at the deadline): the events are published after the caller is told.
func (r *rig) settlements(id messages.SessionID, n int) []protocol.EventSendSettled {
	r.t.Helper()
	var got []protocol.EventSendSettled
	testkit.WaitFor(r.t, 10*time.Second, fmt.Sprintf("%d settlements published for %s", n, id), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		got = append([]protocol.EventSendSettled(nil), r.settled[id]...)
		return len(got) >= n
	})
	return got
}

// usable proves a session still works: a send settles on its prompt.
func (r *rig) usable(id messages.SessionID) {
	r.t.Helper()
	res, err := r.sendAfterSettled(testkit.Ctx(r.t), id, messages.SendRequest{Text: "echo ok", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "echo ok") {
		r.t.Fatalf("session not usable: %+v, %v", res, err)
	}
}

// sendAfterSettled sends once; the caller has seen the session's previous
// send settle (its Send or Result returned). A failed send frees the slot
// before its caller is told; one that settled before its write or SIGINT
// goroutine reported keeps the slot until it does (so no late signal
// reaches the next send), and StartSend waits for that itself. So
// SEND_ACTIVE here is a regression and fails the test.
func (r *rig) sendAfterSettled(ctx context.Context, id messages.SessionID, req messages.SendRequest) (messages.SendResult, error) {
	r.t.Helper()
	res, err := r.svc.Session(r.owner, id).Send(ctx, req)
	if errors.Is(err, messages.ErrSendActive) {
		r.t.Fatalf("send to %s after its previous send settled: %v", id, err)
	}
	return res, err
}

// waitIdle waits until the owner has no activity left.
func (r *rig) waitIdle() {
	r.t.Helper()
	testkit.WaitFor(r.t, 10*time.Second, "the owner's activity to end", func() bool { return !r.activity().Active })
}

// closeAll disposes the owner; it must end with no activity left.
func (r *rig) closeAll() error {
	r.t.Helper()
	err := r.svc.DisposeOwner(testkit.Ctx(r.t), r.owner)
	return err
}

var errInjected = errors.New("injected fault")

func TestSpawnFails(t *testing.T) {
	b := faulty.New("shell")
	b.Script(faulty.OpSpawn, faulty.Fail(errInjected))
	r := newRig(t, b)
	_, err := r.svc.Spawn(testkit.Ctx(t), r.owner, messages.SpawnRequest{})
	if !errors.Is(err, errInjected) {
		t.Fatalf("spawn: %v, want the backend's error", err)
	}
	if a := r.activity(); a.Active || a.Failures != 0 {
		t.Fatalf("activity after a failed spawn that started nothing: %+v", a)
	}
	id, _ := r.spawn() // the service is still usable
	r.usable(id)
}

func TestSpawnHangsUntilCancelled(t *testing.T) {
	b := faulty.New("shell")
	b.Script(faulty.OpSpawn, faulty.Hang())
	r := newRig(t, b)
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	go func() {
		if b.Entered(testkit.Ctx(t), faulty.OpSpawn, 1) == nil {
			cancel(cause)
		}
	}()
	_, err := r.svc.Spawn(ctx, r.owner, messages.SpawnRequest{})
	if !errors.Is(err, cause) {
		t.Fatalf("spawn: %v, want the caller's cause", err)
	}
	if a := r.activity(); a.Active {
		t.Fatalf("activity after a cancelled spawn: %+v", a)
	}
	id, _ := r.spawn()
	r.usable(id)
}

func TestSpawnExitsBeforeReady(t *testing.T) {
	b := faulty.New("shell")
	b.Script(faulty.OpSpawn, faulty.Exit(2))
	r := newRig(t, b)
	_, err := r.svc.Spawn(testkit.Ctx(t), r.owner, messages.SpawnRequest{})
	if !errors.Is(err, messages.ErrStartupExited) {
		t.Fatalf("spawn: %v, want ErrStartupExited", err)
	}
	if calls, closed := b.Sessions()[0].Closes(); calls != 1 || !closed {
		t.Fatalf("the exited startup was closed %d times (closed %v), want once", calls, closed)
	}
	if a := r.activity(); a.Active {
		t.Fatalf("activity: %+v", a)
	}
}

// A startup that never becomes ready is cancelled; its rollback fails, so
// the caller's cause comes back together with a retained cleanup failure
// that the next dispose retries and reports.
func TestStartupRollbackFailsThenSucceeds(t *testing.T) {
	b := faulty.New("shell")
	b.Script(faulty.OpSpawn, faulty.Silent())
	b.Script(faulty.OpClose, faulty.Fail(errInjected))
	r := newRig(t, b)
	cause := errors.New("user pressed stop")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	go func() {
		if b.Entered(testkit.Ctx(t), faulty.OpSpawn, 1) == nil {
			cancel(cause)
		}
	}()
	_, err := r.svc.Spawn(ctx, r.owner, messages.SpawnRequest{})
	if !errors.Is(err, cause) {
		t.Fatalf("spawn: %v, want the caller's cause kept", err)
	}
	if a := r.activity(); !a.Active || a.Failures != 1 {
		t.Fatalf("activity after a failed rollback: %+v, want the failure retained", a)
	}
	err = r.closeAll()
	var ce *messages.CleanupError
	if !errors.Is(err, errInjected) || !errors.As(err, &ce) {
		t.Fatalf("dispose: %v, want the retained *CleanupError", err)
	}
	if calls, closed := b.Sessions()[0].Closes(); calls != 2 || !closed {
		t.Fatalf("closes %d (closed %v), want the failed one retried once", calls, closed)
	}
	if a := r.activity(); a.Active || a.Failures != 0 {
		t.Fatalf("activity after dispose: %+v", a)
	}
}

func TestKillFailsThenSucceeds(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpClose, faulty.Fail(errInjected))
	_, err := r.svc.Session(r.owner, id).Close(testkit.Ctx(t), "test")
	var ce *messages.CleanupError
	if !errors.As(err, &ce) || !errors.Is(err, errInjected) || len(ce.Survivors) == 0 {
		t.Fatalf("kill: %v, want a *CleanupError with survivors", err)
	}
	if a := r.activity(); !a.Active {
		t.Fatalf("activity: %+v, want the session still active", a)
	}
	if list, _ := r.svc.List(testkit.Ctx(t), r.owner); len(list) != 1 {
		t.Fatalf("list after a failed kill: %v, want the session kept for a retry", list)
	}
	if _, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "x", Submit: true}); !errors.Is(err, messages.ErrSessionClosing) {
		t.Fatalf("send after a failed kill: %v, want ErrSessionClosing", err)
	}
	rep, err := r.svc.Session(r.owner, id).Close(testkit.Ctx(t), "retry")
	closed := !rep.Joined
	if err != nil || !closed || len(rep.Killed) == 0 {
		t.Fatalf("retried kill: closed %v, %+v, %v", closed, rep, err)
	}
	if a := r.activity(); a.Active {
		t.Fatalf("activity after the retry: %+v", a)
	}
	if err := r.closeAll(); err != nil {
		t.Fatalf("dispose: %v", err)
	}
}

func TestWriteFails(t *testing.T) {
	for _, op := range []faulty.Op{faulty.OpWrite, faulty.OpTryWrite} {
		t.Run(string(op), func(t *testing.T) {
			b := faulty.New("shell")
			r := newRig(t, b)
			id, s := r.spawn()
			s.Script(op, faulty.Fail(errInjected))
			_, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "lost", Submit: true})
			if !errors.Is(err, messages.ErrTransport) || !errors.Is(err, errInjected) {
				t.Fatalf("send: %v, want ErrTransport wrapping the write error", err)
			}
			if w := s.Writes(); len(w) != 0 {
				t.Fatalf("writes %q reached the terminal", w)
			}
			r.usable(id)
			got := r.settlements(id, 2)
			if len(got) != 2 || !errors.Is(got[0].Err, errInjected) || got[1].Err != nil {
				t.Fatalf("settlements %+v, want the failure then the success, once each", got)
			}
		})
	}
}

// A write that blocks (the program does not read its input) is abandoned
// when the caller cancels: the caller's cause comes back, the rest of the
// input is never written, and the session takes the next send.
func TestWriteHangsThenCancel(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpWrite, faulty.Hang())
	cause := errors.New("agent cancelled")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	go func() {
		if b.Entered(testkit.Ctx(t), faulty.OpWrite, 1) == nil {
			cancel(cause)
		}
	}()
	start := time.Now()
	res, err := r.svc.Session(r.owner, id).Send(ctx, messages.SendRequest{Text: "stuck", Submit: true})
	if !errors.Is(err, cause) {
		t.Fatalf("send: %v, want the caller's cause", err)
	}
	if limit := time.Duration(testkit.Config().TimeoutMs) * time.Millisecond; time.Since(start) >= limit {
		t.Fatalf("the cancelled send took %v: it waited for its deadline", time.Since(start))
	}
	// The abandoned write may have reached the program in part, so the
	// cancel interrupts it; its prompt settles the send.
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("cancelled send settled as %+v, want the interrupt's prompt", res)
	}
	if w, sig := s.Writes(), s.Signals(); len(w) != 0 || len(sig) != 1 || sig[0] != messages.SIGINT {
		t.Fatalf("writes %q, signals %v: want nothing written and one SIGINT", w, sig)
	}
	r.usable(id)
	if got := r.settlements(id, 2); len(got) != 2 {
		t.Fatalf("settlements %+v, want two", got)
	}
}

// A write that blocks and is never cancelled: the send times out, and the
// blocked write must not keep the session's send slot forever.
func TestWriteHangsUntilDeadline(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpWrite, faulty.Hang())
	res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "stuck", Submit: true})
	if err != nil || res.WaitReason != messages.WaitTimeout {
		t.Fatalf("send: %+v, %v; want timeout", res, err)
	}
	r.usable(id)
}

func TestSignalFails(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		if line == "sleep" {
			return faulty.Reply{Output: "working\r\n", Running: true}
		}
		return faulty.Echo(line)
	}))
	r := newRig(t, b)
	id, s := r.spawn()
	// A caller's signal: the error comes back as it is.
	s.Script(faulty.OpSignal, faulty.Fail(errInjected))
	op, err := r.svc.Session(r.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Session(r.owner, id).Signal(testkit.Ctx(t), messages.SIGTERM); !errors.Is(err, errInjected) {
		t.Fatalf("signal: %v", err)
	}
	// The runtime's SIGINT on cancel: the send settles with a transport
	// error, once.
	s.Script(faulty.OpSignal, faulty.Fail(errInjected))
	if !op.Cancel() {
		t.Fatal("cancel refused before the send settled")
	}
	_, err = op.Result(testkit.Ctx(t))
	if !errors.Is(err, messages.ErrTransport) || !errors.Is(err, errInjected) {
		t.Fatalf("cancelled send: %v, want ErrTransport wrapping the signal error", err)
	}
	if op.Cancel() {
		t.Fatal("a settled send accepted a cancel")
	}
	// The command still runs; a working SIGINT ends it.
	if res, err := r.svc.Session(r.owner, id).Signal(testkit.Ctx(t), messages.SIGINT); err != nil || !res.Delivered {
		t.Fatalf("signal: %+v, %v", res, err)
	}
	r.usable(id)
	if got := r.settlements(id, 2); len(got) != 2 {
		t.Fatalf("settlements %+v", got)
	}
}

// Output in one-byte chunks gives the same viewport as output in one piece.
func TestBytewiseOutput(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		return faulty.Reply{Output: strings.Repeat("line of output\r\n", 20), Code: 3}
	}))
	r := newRig(t, b)
	id, s := r.spawn()
	whole, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "cmd", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Script(faulty.OpWrite, faulty.Bytewise())
	split, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "cmd", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if split.Viewport != whole.Viewport || split.WaitReason != messages.WaitStdinRead || split.ExitCode == nil || *split.ExitCode != 3 {
		t.Fatalf("bytewise %+v\nwhole %+v", split, whole)
	}
}

// The shell exits while the send waits: the send settles session_exit,
// once; the session refuses further sends and closes cleanly.
func TestExitMidSend(t *testing.T) {
	for _, f := range []faulty.Fault{faulty.Exit(7), faulty.OutputAfterExit(7)} {
		t.Run(f.String(), func(t *testing.T) {
			b := faulty.New("shell")
			r := newRig(t, b)
			id, s := r.spawn()
			s.Script(faulty.OpWrite, f)
			res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "exit 7", Submit: true})
			if err != nil || res.WaitReason != messages.WaitSessionExit || !res.Status.Exited || *res.Status.ExitCode != 7 {
				t.Fatalf("send: %+v, %v; want session_exit with code 7", res, err)
			}
			if _, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "x"}); !errors.Is(err, messages.ErrSessionExited) {
				t.Fatalf("send after exit: %v, want ErrSessionExited", err)
			}
			if got := r.settlements(id, 1); len(got) != 1 {
				t.Fatalf("settlements %+v, want one", got)
			}
			// Output that arrived after the exit is not lost: it reaches
			// the scrollback (perhaps after the send settled), and reads
			// still work on an exited session.
			ctx := testkit.Ctx(t)
			testkit.WaitFor(t, 10*time.Second, "the late output in the scrollback", func() bool {
				page, err := r.svc.Session(r.owner, id).Read(ctx, messages.ReadRequest{})
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				return strings.Contains(page.Text, "exit 7")
			})
			if err := r.closeAll(); err != nil {
				t.Fatalf("dispose: %v", err)
			}
			if a := r.activity(); a.Active {
				t.Fatalf("activity: %+v", a)
			}
		})
	}
}

// The exact tier: a program that reads the terminal and prints no prompt
// marker is proven ready by the probe; a probe that fails, panics or lies
// leaves the send to silence, and the next look works again.
func TestProbeFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults []faulty.Fault
		want   messages.WaitReason
	}{
		{"truthful", nil, messages.WaitStdinRead},
		{"fails", []faulty.Fault{faulty.Fail(errInjected)}, messages.WaitStdinRead},
		{"panics", []faulty.Fault{faulty.Panic("prober bug")}, messages.WaitStdinRead},
		{"lies unknown", repeat(faulty.Unknown(), 1000), messages.WaitInferredIdle},
		{"lies unsupported", []faulty.Fault{faulty.Observe(backend.StdinObservation{})}, messages.WaitInferredIdle},
		{"claims a wait without consumed input", repeat(faulty.Observe(backend.StdinObservation{Supported: true, Waiting: true, Drained: true}), 1000), messages.WaitInferredIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := faulty.New("repl", faulty.Reader())
			r := newRig(t, b)
			id, s := r.spawn()
			s.Script(faulty.OpProbe, tt.faults...)
			res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "1+1", Submit: true})
			if err != nil || res.WaitReason != tt.want {
				t.Fatalf("send: %+v, %v; want %s", res, err, tt.want)
			}
			if tt.want == messages.WaitStdinRead && res.Reader != "reader" {
				t.Fatalf("reader %q", res.Reader)
			}
			if got := r.settlements(id, 1); len(got) != 1 {
				t.Fatalf("settlements %+v", got)
			}
		})
	}
}

func repeat(f faulty.Fault, n int) []faulty.Fault {
	out := make([]faulty.Fault, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// The inline write is the send actor's own action: a panic there fails
// that send with a transport error, and the session stays open and
// usable, with nothing torn down.
func TestTryWritePanics(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpTryWrite, faulty.Panic("backend bug"))
	_, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "boom", Submit: true})
	if !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("send whose inline write panicked: %v, want ErrTransport", err)
	}
	r.usable(id)
	if calls, _ := s.Closes(); calls != 0 {
		t.Fatalf("closes %d: a failed send must not tear its session down", calls)
	}
}

// A backend call that panics on the session actor's goroutine stops that
// session; the caller still hears an answer, the tree is torn down, and
// the owner and service stay usable.
func TestReadPanics(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpRead, faulty.Panic("backend bug"))
	_, err := r.svc.Session(r.owner, id).Read(testkit.Ctx(t), messages.ReadRequest{})
	if !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("read on a session whose backend panicked: %v, want ErrTransport", err)
	}
	// The teardown runs off the mailbox; the owner counts it as activity
	// until it finished.
	r.waitIdle()
	if calls, closed := s.Closes(); calls != 1 || !closed {
		t.Fatalf("closes %d (closed %v): the failed session's tree was not torn down once", calls, closed)
	}
	id2, _ := r.spawn()
	r.usable(id2)
	if _, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "x"}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("send to the failed session: %v, want ErrNoSession", err)
	}
}

// The ordinary cancel: a command runs, the caller's context ends, a real
// SIGINT interrupts it and the prompt that follows settles the send; the
// caller gets its cause and the result.
func TestCancelRunningCommand(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		if line == "sleep" {
			return faulty.Reply{Output: "zzz\r\n", Running: true}
		}
		return faulty.Echo(line)
	}))
	r := newRig(t, b)
	id, s := r.spawn()
	cause := errors.New("agent moved on")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	op, err := r.svc.Session(r.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	// Output shows the command runs; then the caller gives up.
	for rd := (messages.SendRead{}); !strings.Contains(rd.Delta, "zzz"); {
		if rd, err = op.ReadOutput(testkit.Ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	cancel(cause)
	if !op.Cancel() {
		t.Fatal("cancel refused")
	}
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || res.WaitReason != messages.WaitStdinRead || *res.ExitCode != 130 {
		t.Fatalf("cancelled send: %+v, %v; want the interrupt's prompt", res, err)
	}
	if _, err := op.Result(ctx); err != nil {
		t.Fatalf("a settled result must not turn into the context's cause: %v", err)
	}
	// Send with a context that ends: the cause comes back with the result.
	ctx2, cancel2 := context.WithCancelCause(testkit.Ctx(t))
	go func() {
		if b.Entered(testkit.Ctx(t), faulty.OpTryWrite, 2) == nil {
			cancel2(cause)
		}
	}()
	res, err = r.sendAfterSettled(ctx2, id, messages.SendRequest{Text: "sleep", Submit: true})
	if !errors.Is(err, cause) || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("send: %+v, %v; want the result and the caller's cause", res, err)
	}
	if sig := s.Signals(); len(sig) != 2 {
		t.Fatalf("signals %v, want one SIGINT per cancel", sig)
	}
	r.usable(id)
	if got := r.settlements(id, 3); len(got) != 3 {
		t.Fatalf("settlements %+v", got)
	}
}

// A close that fails during a dispose is reported by the dispose, joined
// with the others; the sessions that closed are gone, and the service
// takes new owners.
func TestDisposeReportsCloseFailure(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	_, s1 := r.spawn()
	_, s2 := r.spawn()
	s2.Script(faulty.OpClose, faulty.Fail(errInjected))
	err := r.closeAll()
	var ce *messages.CleanupError
	if !errors.Is(err, errInjected) || !errors.As(err, &ce) {
		t.Fatalf("dispose: %v, want the *CleanupError", err)
	}
	if n, closed := s1.Closes(); n != 1 || !closed {
		t.Fatalf("first session closes %d (closed %v)", n, closed)
	}
	// (Once the owner is gone the failed session's actor stops, and its
	// Stopping handler tries the teardown once more, unobserved: so at
	// least one close, not exactly one.)
	if n, _ := s2.Closes(); n < 1 {
		t.Fatalf("failing session closes %d", n)
	}
	if _, err := r.svc.Spawn(testkit.Ctx(t), r.owner, messages.SpawnRequest{}); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("spawn for a disposed owner: %v", err)
	}
	r.owner, err = r.svc.NewOwner(testkit.Ctx(t), "next")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := r.spawn()
	r.usable(id)
}

// A close that is slow: a second kill joins it (closed false), both
// return once it finished, and the teardown ran once.
func TestSlowCloseIsJoined(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	release := make(chan struct{})
	s.Script(faulty.OpClose, faulty.HangUntil(release))
	first := make(chan error, 1)
	go func() {
		rep, err := r.svc.Session(r.owner, id).Close(testkit.Ctx(t), "test")
		closed := !rep.Joined
		if err == nil && !closed {
			err = errors.New("the first kill joined")
		}
		first <- err
	}()
	if err := b.Entered(testkit.Ctx(t), faulty.OpClose, 1); err != nil {
		t.Fatal(err)
	}
	// The second kill and then a read travel the same mailboxes (service,
	// owner, session): once the read is answered, the kill was handled,
	// while the close is still held.
	root := r.svc.System().Root
	second := root.RequestFuture(r.svc.PID(), &protocol.Kill{Owner: r.owner, Session: id, Reason: "again"}, 10*time.Second)
	rd, err := root.RequestFuture(r.svc.PID(), &protocol.Read{Owner: r.owner, Session: id}, 10*time.Second).Result()
	if err != nil || rd.(*protocol.ReadReply).Err != nil {
		t.Fatalf("read while closing: %v %+v", err, rd)
	}
	if calls, _ := s.Closes(); calls != 1 {
		t.Fatalf("closes %d while held", calls)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first kill: %v", err)
	}
	m, err := second.Result()
	if k, ok := m.(*protocol.KillReply); err != nil || !ok || k.Err != nil || k.Closed {
		t.Fatalf("second kill: %+v, %v; want a join (closed false, no error)", m, err)
	}
	if calls, closed := s.Closes(); calls != 1 || !closed {
		t.Fatalf("closes %d (closed %v), want one shared teardown", calls, closed)
	}
	r.waitIdle()
}

// A probe stuck in the kernel (reading /proc of a process in D state):
// sends fall back to silence instead of waiting on it, and closing the
// session releases it.
func TestProbeHangs(t *testing.T) {
	b := faulty.New("repl", faulty.Reader())
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpProbe, faulty.Hang())
	res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "1+1", Submit: true})
	if err != nil || res.WaitReason != messages.WaitInferredIdle {
		t.Fatalf("send: %+v, %v; want inferred_idle", res, err)
	}
	if rep, err := r.svc.Session(r.owner, id).Close(testkit.Ctx(t), "test"); err != nil || rep.Joined {
		t.Fatalf("kill: %v", err)
	}
	r.waitIdle()
}

// A script that asks an operation for a fault it cannot express fails at
// once, naming both, instead of testing nothing.
func TestScriptRejectsImpossibleFault(t *testing.T) {
	for _, tc := range []struct {
		op faulty.Op
		f  faulty.Fault
	}{
		{faulty.OpSignal, faulty.Hang()},
		{faulty.OpWrite, faulty.Panic("x")},
		{faulty.OpSpawn, faulty.Unknown()},
		{faulty.OpClose, faulty.Bytewise()},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.f.String()) || !strings.Contains(msg, string(tc.op)) {
					t.Errorf("Script(%s, %s): panic %q, want one naming both", tc.op, tc.f, msg)
				}
			}()
			faulty.New("x").Script(tc.op, tc.f)
		}()
	}
}

// A backend call that panics on the send actor's goroutine (here while it
// answers ReadOutput) fails that send: it settles once with ErrTransport,
// the reader is answered, and the session takes the next send.
func TestTakeOutputPanics(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		if line == "sleep" {
			return faulty.Reply{Output: "zzz\r\n", Running: true}
		}
		return faulty.Echo(line)
	}))
	r := newRig(t, b)
	id, s := r.spawn()
	op, err := r.svc.Session(r.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Script(faulty.OpTakeOutput, faulty.Panic("backend bug"))
	// A short deadline of its own: the answer must come from the runtime,
	// not from the context.
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := op.ReadOutput(rctx); !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("read output from a send whose backend panicked: %v, want ErrTransport", err)
	}
	if _, err := op.Result(testkit.Ctx(t)); !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("send: %v, want ErrTransport", err)
	}
	r.usable(id)
	if got := r.settlements(id, 2); len(got) != 2 || !errors.Is(got[0].Err, messages.ErrTransport) {
		t.Fatalf("settlements %+v", got)
	}
}

// A session whose actor fails and whose teardown then fails too: the
// failure is retained by the owner (activity, Failures) until a dispose
// reports it.
func TestOrphanTeardownFailureIsRetained(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpRead, faulty.Panic("backend bug"))
	s.Script(faulty.OpClose, faulty.Fail(errInjected))
	if _, err := r.svc.Session(r.owner, id).Read(testkit.Ctx(t), messages.ReadRequest{}); !errors.Is(err, messages.ErrTransport) {
		t.Fatalf("read: %v", err)
	}
	testkit.WaitFor(t, 10*time.Second, "the failed teardown retained as the owner's failure", func() bool { return r.activity().Failures == 1 })
	if active, err := r.svc.HasOwnerActivity(testkit.Ctx(t), r.owner); err != nil || !active {
		t.Fatalf("Service.HasOwnerActivity = %v, %v: a retained failure is activity", active, err)
	}
	if err := r.closeAll(); !errors.Is(err, errInjected) {
		t.Fatalf("dispose: %v, want the retained failure", err)
	}
}

// A spawn stuck in the backend when its owner is disposed, or the service
// shut down: the spawn ends with the owner's or the service's refusal, and
// the dispose or shutdown waits for it and ends cleanly.
func TestSpawnHangsThroughDispose(t *testing.T) {
	for _, viaShutdown := range []bool{false, true} {
		name := "dispose"
		if viaShutdown {
			name = "shutdown"
		}
		t.Run(name, func(t *testing.T) {
			b := faulty.New("shell")
			b.Script(faulty.OpSpawn, faulty.Hang())
			r := newRig(t, b)
			errc := make(chan error, 1)
			go func() {
				_, err := r.svc.Spawn(testkit.Ctx(t), r.owner, messages.SpawnRequest{})
				errc <- err
			}()
			if err := b.Entered(testkit.Ctx(t), faulty.OpSpawn, 1); err != nil {
				t.Fatal(err)
			}
			want := messages.ErrOwnerNotLive
			if viaShutdown {
				want = messages.ErrServiceDisposing
				if err := r.svc.Shutdown(testkit.Ctx(t)); err != nil {
					t.Fatalf("shutdown: %v", err)
				}
			} else if err := r.closeAll(); err != nil {
				t.Fatalf("dispose: %v", err)
			}
			if err := <-errc; !errors.Is(err, want) {
				t.Fatalf("spawn: %v, want %v", err, want)
			}
		})
	}
}

// A dispose that cancels a pending spawn whose rollback close then fails:
// the session is kept for a retry even though the dispose is already under
// way, the dispose retries it, and answers with the failure once the retry
// finished.
func TestDisposeDuringFailingRollback(t *testing.T) {
	b := faulty.New("shell")
	b.Script(faulty.OpSpawn, faulty.Silent())
	b.Script(faulty.OpClose, faulty.Fail(errInjected))
	r := newRig(t, b)
	errc := make(chan error, 1)
	go func() {
		_, err := r.svc.Spawn(testkit.Ctx(t), r.owner, messages.SpawnRequest{})
		errc <- err
	}()
	if err := b.Entered(testkit.Ctx(t), faulty.OpSpawn, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.closeAll(); !errors.Is(err, errInjected) {
		t.Fatalf("dispose: %v, want the rollback's failure", err)
	}
	if err := <-errc; !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("spawn: %v, want ErrOwnerNotLive", err)
	}
	if calls, closed := b.Sessions()[0].Closes(); calls != 2 || !closed {
		t.Fatalf("closes %d (closed %v), want the failed rollback retried by the dispose", calls, closed)
	}
}

// Elapsed counts from the reservation: time spent in the inline write at
// reservation (where a fast program may already run and answer) belongs to
// the send. It was measured from the send actor's creation, after it, so a
// command could look faster than its own sleep.
func TestElapsedIncludesInlineWrite(t *testing.T) {
	clock := &testkit.OffsetClock{}
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		if line == "slow" {
			clock.Advance(300 * time.Millisecond) // the inline write "takes" 300ms
		}
		return faulty.Echo(line)
	}))
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testkit.Config(), Clock: clock, Backends: []backend.Backend{b}})
	owner := testkit.Owner(t, svc, "clock")
	s, err := svc.Spawn(testkit.Ctx(t), owner, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Session(owner, s.ID()).Send(testkit.Ctx(t), messages.SendRequest{Text: "slow", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if res.Elapsed < 300*time.Millisecond {
		t.Fatalf("elapsed %v, want at least the 300ms spent in the inline write", res.Elapsed)
	}
}
