package host_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A host that dies (kill -9) or stops answering (SIGSTOP) mid-send: the
// pending Send fails with ErrHostLost within 2 s, not at its deadline, and
// the session reports exited with cause host_lost.
func TestHostLossFailsPendingSend(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, h *hostProc)
	}{
		{"kill -9", func(t *testing.T, h *hostProc) { h.kill9(t) }},
		{"SIGSTOP", func(t *testing.T, h *hostProc) {
			if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			op, err := sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
			if err != nil {
				t.Fatal(err)
			}
			// The sleep runs on the host once output says so.
			testkit.WaitFor(t, 5*time.Second, "the sleep to run", func() bool {
				d, err := op.ReadOutput(ctx)
				return err == nil && d.Delta != "" || err != nil
			})
			lostAt := time.Now()
			tc.lose(t, h)
			_, err = op.Result(ctx)
			took := time.Since(lostAt)
			t.Logf("host lost → Send failed in %v", took.Round(time.Millisecond))
			if !errors.Is(err, messages.ErrHostLost) {
				t.Fatalf("send: %v, want ErrHostLost", err)
			}
			if took > 2*time.Second {
				t.Fatalf("the pending send failed after %v, want within 2s", took)
			}
			st, err := sh.Status(ctx)
			if err != nil || !st.Exited || st.Cause != messages.CauseHostLost {
				t.Fatalf("status %v (%v), want exited with cause host_lost", st, err)
			}
			// Later calls fail at once, typed; the client stays healthy.
			if _, err := sh.Send(ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrSessionExited) || !errors.Is(err, messages.ErrHostLost) {
				t.Fatalf("send on a lost session: %v", err)
			}
			if _, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: messages.AnyHost}); !errors.Is(err, messages.ErrNoHost) {
				t.Fatalf("spawn with every host lost: %v", err)
			}
			if tc.name == "kill -9" {
				// The host's death hung its terminals up: nothing of the
				// session outlives it.
				testkit.WaitFor(t, 5*time.Second, "the dead host's shell to exit", func() bool {
					return syscall.Kill(sh.PID(), 0) == syscall.ESRCH
				})
			}
			if _, err := sh.Close(ctx, "written off"); err != nil {
				t.Fatalf("close of a lost session: %v", err)
			}
			if list, _ := svc.List(ctx, o); len(list) != 0 {
				t.Fatalf("list after close: %v", list)
			}
		})
	}
}
