package host_test

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A host's limit of sessions per client refuses the spawn beyond it with
// ErrSessionLimit; a close makes room again.
func TestSessionsPerClientLimit(t *testing.T) {
	if isolate(t) {
		return
	}
	_, svc, o, sh := spawnOnHost(t, "-max-sessions-per-client", "1")
	ctx := testkit.Ctx(t)
	if _, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"}); !errors.Is(err, messages.ErrSessionLimit) {
		t.Fatalf("second spawn: %v, want ErrSessionLimit", err)
	}
	if _, err := sh.Close(ctx, "room"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10e9, "room for a session", func() bool {
		s, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
		if err == nil {
			_, _ = s.Close(ctx, "done")
		}
		return err == nil
	})
}
