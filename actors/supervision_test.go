package actors_test

import (
	"errors"
	"testing"
	"time"

	. "github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// injected sends an InjectPanic and returns the reply, which must be an
// error wrapping ErrTransport: the failed message's sender is answered.
func injected(t *testing.T, svc *Service, to any, target string) {
	t.Helper()
	pid := svc.PID()
	if target == "tasks" {
		pid = svc.TasksPID()
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
	svc, o, sp, fs := promptingSession(t, faulty.New("a"))
	injected(t, svc, InjectPanic(messages.Owner{}), "service")
	if res, err := sp.Send(testkit.Ctx(t), messages.SendRequest{Text: "x", Submit: true}); err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("send after the service failed: %+v, %v", res, err)
	}
	if closes, _ := fs.Closes(); closes != 0 {
		t.Fatalf("the service's failure closed a session (%d closes)", closes)
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); err != nil {
		t.Fatalf("spawn after the service failed: %v", err)
	}
}

// A failed owner is stopped: its sessions are torn down, it is forgotten,
// and other owners are untouched.
func TestSupervisionOwnerStops(t *testing.T) {
	b := faulty.New("a")
	svc, o, _, victim := promptingSession(t, b)
	other, err := svc.NewOwner(testkit.Ctx(t), "other")
	if err != nil {
		t.Fatal(err)
	}
	keep, err := svc.Spawn(testkit.Ctx(t), other, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	kept := b.Sessions()[1]
	injected(t, svc, InjectPanic(o), "owner")
	testkit.WaitFor(t, 5*time.Second, "the failed owner's session closed", func() bool {
		_, closed := victim.Closes()
		return closed
	})
	ctx := testkit.Ctx(t)
	testkit.WaitFor(t, 5*time.Second, "the failed owner forgotten", func() bool {
		_, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
		return errors.Is(err, messages.ErrOwnerNotLive)
	})
	if l, err := svc.List(testkit.Ctx(t), o); err != nil || len(l) != 0 {
		t.Fatalf("the failed owner lists %+v, %v", l, err)
	}
	if res, err := svc.Session(other, keep.ID()).Send(testkit.Ctx(t), messages.SendRequest{Text: "x", Submit: true}); err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("another owner's send: %+v, %v", res, err)
	}
	if closes, _ := kept.Closes(); closes != 0 {
		t.Fatal("another owner's session was closed")
	}
}

// The tasks registry resumes after a failed message and keeps serving.
func TestSupervisionTasksResumes(t *testing.T) {
	svc, o, sp, _ := promptingSession(t, faulty.New("a"))
	injected(t, svc, InjectPanic(messages.Owner{}), "tasks")
	id, err := svc.StartTask(testkit.Ctx(t), o, messages.TaskRequest{Session: sp.ID(), Send: messages.SendRequest{Text: "x", Submit: true}})
	if err != nil {
		t.Fatalf("task after the registry failed: %v", err)
	}
	if _, err := svc.TaskOutput(testkit.Ctx(t), o, id, 5*time.Second); err != nil {
		t.Fatalf("task output: %v", err)
	}
}
