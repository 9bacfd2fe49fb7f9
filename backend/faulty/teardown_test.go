package faulty_test

// Ending sessions under faults: kills and signals that fail, closes that
// fail or are slow during a dispose, and backend calls that panic on an
// actor's goroutine (the session ends and its teardown is kept).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

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
