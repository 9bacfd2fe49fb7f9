package faulty_test

// Spawn under faults: a backend's spawn that fails, hangs, exits before its
// prompt, or whose rollback fails, alone or while its owner is disposed.

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

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
	ctx := cancelOnEntry(t, b, faulty.OpSpawn, 1, cause)
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
	ctx := cancelOnEntry(t, b, faulty.OpSpawn, 1, cause)
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
