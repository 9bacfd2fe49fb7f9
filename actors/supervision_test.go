package actors

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// oneSessionBackend spawns fake sessions that print a prompt at once.
func oneSessionBackend(sessions chan<- *fakeSession) *fakeBackend {
	return &fakeBackend{typ: "a", spawn: func(_ context.Context, _ messages.SpawnSpec, ev backend.Events) (backend.Session, error) {
		fs := newFakeSession(ev)
		fs.emit("$ ", true, 0)
		sessions <- fs
		return fs, nil
	}}
}

// promptingSession opens one session on a backend whose sessions print a
// prompt at once; tests script faults on the returned fake afterwards.
func promptingSession(t *testing.T) (*Service, messages.Owner, *Session, *fakeSession) {
	t.Helper()
	sessions := make(chan *fakeSession, 1)
	svc, o := newTestService(t, oneSessionBackend(sessions))
	sp, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return svc, o, sp, <-sessions
}

// injected sends an injectPanic and returns the reply, which must be an
// error wrapping ErrTransport: the failed message's sender is answered.
func injected(t *testing.T, svc *Service, to *injectPanic, target string) {
	t.Helper()
	pid := svc.PID()
	if target == "tasks" {
		pid = svc.tasks
	}
	r, err := svc.System().Root.RequestFuture(pid, to, 5*time.Second).Result()
	if err != nil {
		t.Fatalf("the failed %s's sender got no answer: %v", target, err)
	}
	if e, ok := r.(error); !ok || !errors.Is(e, messages.ErrTransport) {
		t.Fatalf("the failed %s answered %#v, want an ErrTransport error", target, r)
	}
}

// The service resumes after a failed message: owners, sessions and their
// processes are untouched, and it keeps serving.
func TestSupervisionServiceResumes(t *testing.T) {
	sessions := make(chan *fakeSession, 4)
	svc, o := newTestService(t, oneSessionBackend(sessions))
	sp, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	fs := <-sessions
	injected(t, svc, &injectPanic{}, "service")
	if res, err := svc.Send(testkit.Ctx(t), o, sp.ID(), messages.SendRequest{Text: "x", Submit: true}); err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("send after the service failed: %+v, %v", res, err)
	}
	fs.mu.Lock()
	closes := fs.closes
	fs.mu.Unlock()
	if closes != 0 {
		t.Fatalf("the service's failure closed a session (%d closes)", closes)
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); err != nil {
		t.Fatalf("spawn after the service failed: %v", err)
	}
	<-sessions
}

// A failed owner is stopped: its sessions are torn down, it is forgotten,
// and other owners are untouched.
func TestSupervisionOwnerStops(t *testing.T) {
	sessions := make(chan *fakeSession, 4)
	svc, o := newTestService(t, oneSessionBackend(sessions))
	other, err := svc.NewOwner(testkit.Ctx(t), "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); err != nil {
		t.Fatal(err)
	}
	victim := <-sessions
	keep, err := svc.Spawn(testkit.Ctx(t), other, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	kept := <-sessions
	injected(t, svc, &injectPanic{owner: o}, "owner")
	testkit.WaitFor(t, 5*time.Second, "the failed owner's session closed", func() bool {
		victim.mu.Lock()
		defer victim.mu.Unlock()
		return victim.closed
	})
	testkit.WaitFor(t, 5*time.Second, "the failed owner forgotten", func() bool {
		_, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
		return errors.Is(err, messages.ErrOwnerNotLive)
	})
	if l, err := svc.List(testkit.Ctx(t), o); err != nil || len(l) != 0 {
		t.Fatalf("the failed owner lists %+v, %v", l, err)
	}
	if res, err := svc.Send(testkit.Ctx(t), other, keep.ID(), messages.SendRequest{Text: "x", Submit: true}); err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("another owner's send: %+v, %v", res, err)
	}
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if kept.closes != 0 {
		t.Fatal("another owner's session was closed")
	}
}

// The tasks registry resumes after a failed message and keeps serving.
func TestSupervisionTasksResumes(t *testing.T) {
	svc, o, sp, _ := promptingSession(t)
	injected(t, svc, &injectPanic{}, "tasks")
	id, err := svc.StartTask(testkit.Ctx(t), o, messages.TaskRequest{Session: sp.ID(), Send: messages.SendRequest{Text: "x", Submit: true}})
	if err != nil {
		t.Fatalf("task after the registry failed: %v", err)
	}
	if _, err := svc.TaskOutput(testkit.Ctx(t), o, id, 5*time.Second); err != nil {
		t.Fatalf("task output: %v", err)
	}
}
