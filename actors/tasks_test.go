package actors_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Shutdown right after DisposeOwner returned must not wait for an owner
// that already stopped (its dispose reply used to overtake its ownerGone).
func TestShutdownRightAfterDispose(t *testing.T) {
	for i := 0; i < 100; i++ {
		svc, err := NewService(Options{Config: testkit.Config()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RegisterBackend(testkit.Ctx(t), faulty.New("a")); err != nil {
			t.Fatal(err)
		}
		o, err := svc.NewOwner(testkit.Ctx(t), "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{}); err != nil {
			t.Fatal(err)
		}
		if err := svc.DisposeOwner(testkit.Ctx(t), o); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = svc.Shutdown(c)
		cancel()
		if err != nil {
			t.Fatalf("round %d: shutdown: %v", i, err)
		}
	}
}

// Task ids are owned: another owner's id is NO_TASK, and so is every id
// after its owner was disposed.
func TestTaskOwnership(t *testing.T) {
	svc, o := newTestService(t, faulty.New("a"))
	sp, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := svc.StartTask(testkit.Ctx(t), o, messages.TaskRequest{Session: sp.ID(), Send: messages.SendRequest{Text: "x"}, Label: "l"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.NewOwner(testkit.Ctx(t), "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.TaskOutput(testkit.Ctx(t), other, id, 0); !errors.Is(err, messages.ErrNoTask) {
		t.Fatalf("other owner's output: %v", err)
	}
	if _, _, err := svc.KillTask(testkit.Ctx(t), other, id); !errors.Is(err, messages.ErrNoTask) {
		t.Fatalf("other owner's kill: %v", err)
	}
	if _, err := svc.StartTask(testkit.Ctx(t), other, messages.TaskRequest{Session: sp.ID()}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("other owner's start: %v", err)
	}
	if _, err := svc.TaskOutput(testkit.Ctx(t), o, id, 0); err != nil {
		t.Fatalf("own output: %v", err)
	}
	if err := svc.DisposeOwner(testkit.Ctx(t), o); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.TaskOutput(testkit.Ctx(t), o, id, 0); !errors.Is(err, messages.ErrNoTask) {
		t.Fatalf("after dispose: %v", err)
	}
}
