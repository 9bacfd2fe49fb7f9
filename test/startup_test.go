package test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// watchTagged records every live process carrying the test's tag until stop
// is called, so a test can prove what existed during a call and is gone
// after it.
func watchTagged(t *testing.T, tag string) (stop func() []linux.Stat) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen = map[linux.Identity]linux.Stat{}
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			ps, err := procs()
			if err == nil {
				for _, s := range ps {
					if s.Alive() && environHas(s.PID, tagVar+"="+tag) {
						mu.Lock()
						seen[s.Identity()] = s
						mu.Unlock()
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() []linux.Stat {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		out := make([]linux.Stat, 0, len(seen))
		for _, s := range seen {
			out = append(out, s)
		}
		return out
	}
}

// taggedNow lists the live processes with the tag; safe off the test
// goroutine.
func taggedNow(tag string) []linux.Stat {
	ps, _ := procs()
	var out []linux.Stat
	for _, s := range ps {
		if s.Alive() && environHas(s.PID, tagVar+"="+tag) {
			out = append(out, s)
		}
	}
	return out
}

func hasComm(ps []linux.Stat, comm string) bool {
	for _, p := range ps {
		if p.Comm == comm {
			return true
		}
	}
	return false
}

func requireAllGone(t *testing.T, ps []linux.Stat) {
	t.Helper()
	for _, p := range ps {
		if !gone(p.Identity()) {
			t.Errorf("pid %d (%s) survived", p.PID, p.Comm)
		}
	}
}

// Item 11: a start that never becomes ready is rejected and leaves nothing.
func TestStartupFailures(t *testing.T) {
	t.Run("zero-output silence is a timeout, never a session", func(t *testing.T) {
		cfg := testkit.PTYConfig()
		cfg.TimeoutMs = 500
		cfg.IdleSilenceMs, cfg.HandoffGraceMs = 100, 100 // silence long before the deadline
		h := newHarness(t, cfg, local.Options{Shell: "/bin/sh", Args: []string{"-c", "sleep 30"}})
		stop := watchTagged(t, h.tag)
		sp, err := h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{})
		seen := stop()
		if !errors.Is(err, messages.ErrStartupTimeout) {
			t.Fatalf("Spawn: %+v %v, want ErrStartupTimeout", sp, err)
		}
		if !hasComm(seen, "sleep") {
			t.Fatalf("the silent shell was never seen running: %s", describe(seen))
		}
		requireAllGone(t, seen)
		h.checkNoTagged("after the rejected spawn")
		ctx := testkit.Ctx(t)
		if l, err := h.svc.List(ctx, h.owner); err != nil || len(l) != 0 {
			t.Fatalf("a rejected spawn was published: %+v %v", l, err)
		}
		if active, err := h.svc.HasOwnerActivity(ctx, h.owner); err != nil || active {
			t.Fatalf("activity after a rejected spawn: %v %v", active, err)
		}
	})

	t.Run("output then silence publishes", func(t *testing.T) {
		cfg := testkit.PTYConfig()
		cfg.IdleSilenceMs, cfg.HandoffGraceMs = 100, 100
		h := newHarness(t, cfg, local.Options{Shell: "/bin/sh", Args: []string{"-c", "echo motd-$((40+2)); sleep 30"}})
		sp := h.spawn(messages.SpawnRequest{})
		if !strings.Contains(sp.Info().Motd, "motd-42") {
			t.Fatalf("motd %q", sp.Info().Motd)
		}
		if l, err := h.svc.List(testkit.Ctx(t), h.owner); err != nil || len(l) != 1 {
			t.Fatalf("List: %+v %v", l, err)
		}
	})

	t.Run("early exit", func(t *testing.T) {
		for _, script := range []string{"exit 3", "echo bye; exit 3"} {
			h := newHarness(t, testkit.PTYConfig(), local.Options{Shell: "/bin/sh", Args: []string{"-c", script}})
			_, err := h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{})
			if !errors.Is(err, messages.ErrStartupExited) || !strings.HasPrefix(err.Error(), "PTY shell exited during startup (exited code=3 ") {
				t.Fatalf("%q: %v, want ErrStartupExited with the exit status", script, err)
			}
			if strings.Contains(script, "bye") && !strings.Contains(err.Error(), `its output: "bye"`) {
				t.Fatalf("%q: the shell's last words are not in %v", script, err)
			}
			// The shell is gone by itself: there is nothing whose cleanup
			// could have failed.
			var bce *messages.BackendCleanupError
			if errors.As(err, &bce) {
				t.Errorf("%q: a clean early exit reported a cleanup failure: %v", script, err)
			}
			if l, _ := h.svc.List(testkit.Ctx(t), h.owner); len(l) != 0 {
				t.Fatalf("%q: published %+v", script, l)
			}
			if active, err := h.svc.HasOwnerActivity(testkit.Ctx(t), h.owner); err != nil || active {
				t.Errorf("%q: owner activity %v %v after a clean early exit", script, active, err)
			}
		}
	})

	t.Run("cancel during startup returns the cause and leaves nothing", func(t *testing.T) {
		h := newHarness(t, testkit.PTYConfig(), local.Options{Shell: "/bin/sh", Args: []string{"-c", "sleep 30"}})
		cause := errors.New("caller stopped waiting for the shell")
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		// Cancel once the shell runs (the spawn is then mid-startup), and
		// keep what ran at that moment.
		running := make(chan []linux.Stat, 1)
		go func() {
			var ps []linux.Stat
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
				if ps = taggedNow(h.tag); len(ps) > 0 {
					break
				}
			}
			running <- ps
			cancel(cause)
		}()
		_, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{})
		seen := <-running
		if err != cause {
			t.Fatalf("Spawn: %v, want exactly the caller's cause", err)
		}
		if len(seen) == 0 {
			t.Fatal("no process was started before the cancel")
		}
		requireAllGone(t, seen)
		h.checkNoTagged("after the cancelled spawn")
		if active, err := h.svc.HasOwnerActivity(testkit.Ctx(t), h.owner); err != nil || active {
			t.Fatalf("activity after a cancelled spawn: %v %v", active, err)
		}
	})
}
