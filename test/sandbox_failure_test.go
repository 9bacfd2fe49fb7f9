//go:build linux

package test

// A sandbox that fails (issue 5): it cannot be built, bubblewrap is
// missing or broken, or its wrapper hangs or fails before it reports; the
// spawn fails cleanly and nothing outlives it. Helpers: sandbox_test.go.

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A sandbox that cannot be built (the workspace root vanished after the
// policy was made) fails the spawn before any process starts, names the
// root, and releases the fence.
func TestSandboxSetupFailure(t *testing.T) {
	root := t.TempDir()
	var envBuilt atomic.Bool
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: root}, local.Options{
		ParentEnv: func() []string { envBuilt.Store(true); return os.Environ() }})
	if err := os.Remove(root); err != nil {
		t.Fatal(err)
	}
	_, err := h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{Cwd: "/"})
	if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), root) {
		t.Fatalf("Spawn with the root gone: %v, want sandbox.ErrInvalid naming %s", err, root)
	}
	if envBuilt.Load() {
		t.Fatal("the backend got as far as building a process environment")
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("failed spawn left %d leases", n)
	}
}

func TestSandboxUnavailable(t *testing.T) {
	for name, sb := range map[string]sandbox.Sandbox{
		"no provider": nil,
		"no bwrap":    sandbox.NewBubblewrap(sandbox.BubblewrapOptions{Path: "/nonexistent/ptyactor/bwrap"}),
	} {
		t.Run(name, func(t *testing.T) {
			p, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var envBuilt atomic.Bool // the backend builds the child's environment right before it starts a process
			h := newHarness(t, testkit.PTYConfig(), local.Options{Policy: p, Sandbox: sb, ParentEnv: func() []string {
				envBuilt.Store(true)
				return os.Environ()
			}})
			_, err = h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{})
			var ue *sandbox.UnavailableError
			if !errors.Is(err, sandbox.ErrUnavailable) || !errors.As(err, &ue) || ue.Mode != sandbox.ReadOnly {
				t.Fatalf("Spawn: %v, want *sandbox.UnavailableError for read-only", err)
			}
			if !strings.Contains(err.Error(), "apt-get install bubblewrap") {
				t.Fatalf("error %q does not say what to install", err)
			}
			if envBuilt.Load() {
				t.Fatal("the backend got as far as building a process environment")
			}
			if ps := tagged(t, h.tag); len(ps) != 0 {
				t.Fatalf("processes started:\n  %s", describe(ps))
			}
			if n := p.Sessions(h.owner); n != 0 {
				t.Fatalf("failed spawn left %d leases", n)
			}
			// Full access needs no provider.
			if err := p.SetMode(h.owner, sandbox.DangerFullAccess); err != nil {
				t.Fatal(err)
			}
			h.prompt(h.spawn(messages.SpawnRequest{}).ID(), "true", 0)
		})
	}
}

// brokenBwrap is the real provider with an option bwrap rejects: bwrap
// exits before it starts the shell.
type brokenBwrap struct{ sandbox.Sandbox }

func (b brokenBwrap) Wrap(argv []string, r sandbox.Resolution, cwd string) (*sandbox.Command, error) {
	c, err := b.Sandbox.Wrap(argv, r, cwd)
	if err == nil {
		c.Argv = slices.Insert(c.Argv, 1, "--no-such-option")
	}
	return c, err
}

// hangingWrapper starts a process tree and never reports its shell: the
// start waits in ShellPID until the spawn is cancelled.
type hangingWrapper struct{}

func (hangingWrapper) Wrap([]string, sandbox.Resolution, string) (*sandbox.Command, error) {
	return &sandbox.Command{
		Argv: []string{"/bin/sh", "-c", "sleep 600 & exec sleep 601"},
		ShellPID: func(ctx context.Context, root int) (int, error) {
			<-ctx.Done()
			return 0, context.Cause(ctx)
		},
	}, nil
}

// A spawn cancelled while its wrapper has not reported the shell returns
// only once the terminal's whole session is gone: killing the wrapper
// alone leaves what it started running.
func TestSpawnCancelledBeforeTheWrapperReports(t *testing.T) {
	p, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sandboxConfig(), local.Options{Policy: p, Sandbox: hangingWrapper{}})
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	errc := make(chan error, 1)
	go func() {
		_, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{})
		errc <- err
	}()
	var procs []linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the wrapper's two sleeps", func() bool {
		procs = procs[:0]
		for _, s := range tagged(t, h.tag) {
			if s.Comm == "sleep" {
				procs = append(procs, s)
			}
		}
		return len(procs) == 2
	})
	cause := errors.New("test: stop the spawn")
	cancel(cause)
	if err := <-errc; !errors.Is(err, cause) {
		t.Fatalf("Spawn: %v, want the cause", err)
	}
	for _, s := range procs {
		if !gone(s.Identity()) {
			t.Errorf("%s %d outlived the failed spawn", s.Comm, s.PID)
		}
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("failed spawn left %d leases", n)
	}
}

// A wrapper that dies before starting the shell fails the spawn with its
// own words (what it wrote to the terminal), and releases the fence.
func TestSandboxWrapperFailsEarly(t *testing.T) {
	requireProgram(t, "bwrap", "bubblewrap")
	p, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sandboxConfig(), local.Options{Policy: p, Sandbox: brokenBwrap{sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})}})
	_, err = h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{})
	if err == nil || !strings.Contains(err.Error(), "exited before starting the shell") || !strings.Contains(err.Error(), "--no-such-option") {
		t.Fatalf("Spawn: %v, want bwrap's early exit with its message", err)
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("failed spawn left %d leases", n)
	}
	testkit.WaitFor(t, 10*time.Second, "no process of the failed spawn", func() bool { return len(tagged(t, h.tag)) == 0 })
}
