package host_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// While the host is lost, control requests fail with ErrHostLost at
// once, like every other request: the control state was the host's.
func TestControlHostLost(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	svc, o := newClient(t, h)
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatal(err)
	}
	h.Kill(t)
	testkit.WaitFor(t, 10*time.Second, "the host to be lost", func() bool {
		snap, err := sh.Describe(ctx)
		return err == nil && snap.Status.Exited && snap.Status.Cause == messages.CauseHostLost
	})
	if _, err := sh.TakeControl(ctx, messages.TakeControlRequest{}); !errors.Is(err, messages.ErrHostLost) {
		t.Fatalf("take control of a lost host's session: %v, want ErrHostLost", err)
	}
	if _, err := sh.Close(ctx, "written off"); err != nil {
		t.Fatalf("close of a lost session: %v", err)
	}
}
