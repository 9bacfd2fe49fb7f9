//go:build linux

package test

// The sandbox's mode fence (issue 5): an owner's mode or network changes
// only while none of its sessions is open or being spawned (the policy
// holds the fence, across a backend reload); another owner's are its own.
// Helpers: sandbox_test.go.

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestSandboxModeFence(t *testing.T) {
	root := t.TempDir()
	opts := local.Options{}
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: root}, opts)
	ctx := testkit.Ctx(t)
	a := h.owner
	b, err := h.svc.NewOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := h.spawnSandboxed(a)

	err = p.SetMode(a, sandbox.ReadOnly)
	var ce *sandbox.ChangeRefusedError
	if !errors.Is(err, sandbox.ErrChangeRefused) || !errors.As(err, &ce) || ce.Sessions != 1 {
		t.Fatalf("SetMode with an open session: %v, want *ChangeRefusedError for 1 session", err)
	}
	const want = `cannot change sandbox mode from "workspace-write" to "read-only" while persistent terminal sessions are open or being created; wait for creation to settle and close them first`
	if err.Error() != want {
		t.Fatalf("error text:\n  %s\nwant\n  %s", err, want)
	}
	if got := p.Resolve(a, "").Mode; got != sandbox.WorkspaceWrite {
		t.Fatalf("after a refused change the mode is %s", got)
	}
	// A change that keeps the effective mode is fine, even now.
	for _, m := range []sandbox.Mode{sandbox.WorkspaceWrite, ""} {
		if err := p.SetMode(a, m); err != nil {
			t.Fatalf("SetMode(%q), no effective change: %v", m, err)
		}
	}
	allow := true
	if err := p.SetNetwork(a, &allow); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetNetwork with an open session: %v, want refused", err)
	}
	// Keyed to the exact owner: b has nothing open.
	if err := p.SetMode(b, sandbox.ReadOnly); err != nil {
		t.Fatalf("other owner's SetMode: %v", err)
	}
	if got := p.Resolve(b, "").Mode; got != sandbox.ReadOnly {
		t.Fatalf("other owner resolves %s", got)
	}
	// And b's sessions run in b's mode while a's keeps its own.
	spB, _ := h.spawnSandboxed(b)
	if res, err := h.svc.Session(b, spB.ID()).Send(ctx, messages.SendRequest{Text: "touch b.txt", Submit: true}); err != nil || res.ExitCode == nil || *res.ExitCode != 1 {
		t.Fatalf("touch in b's read-only session: %+v %v", res, err)
	}
	h.prompt(sp.ID(), "touch a.txt", 0)
	absent(t, filepath.Join(root, "b.txt"))

	// The fence survives a backend reload: the policy, not the backend,
	// holds it.
	r, err := h.svc.System().Root.RequestFuture(h.svc.PID(), &protocol.UnregisterBackend{Type: "shell"}, 10*time.Second).Result()
	if rep, ok := r.(*protocol.UnregisterBackendReply); err != nil || !ok || !rep.Removed {
		t.Fatalf("unregister the backend: %v %v", r, err)
	}
	if types, err := h.svc.ListBackends(ctx); err != nil || len(types) != 0 {
		t.Fatalf("backends after unregister: %v %v", types, err)
	}
	if err := p.SetMode(a, sandbox.ReadOnly); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetMode with the backend unloaded: %v, want refused", err)
	}
	opts.Policy, opts.Sandbox = p, sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})
	opts.Env = map[string]string{"HOME": root}
	if _, err := h.svc.RegisterBackend(ctx, local.New(h.options(opts))); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMode(a, sandbox.ReadOnly); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetMode after the reload: %v, want refused", err)
	}
	h.prompt(sp.ID(), "true", 0)

	// Closed: the change goes through, and the next session has it.
	if _, err := sp.Close(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMode(a, sandbox.ReadOnly); err != nil {
		t.Fatalf("SetMode after close: %v", err)
	}
	sp, _ = h.spawnSandboxed(a)
	h.refused(sp.ID(), "touch c.txt")
	absent(t, filepath.Join(root, "c.txt"))
}

func TestSandboxModeFencePendingSpawn(t *testing.T) {
	// cat prints nothing, so the startup wait never settles: the spawn
	// stays pending until it is cancelled. Sandboxed, cat is pid 1 of its
	// namespace and ignores the hang-up, so the rollback needs SIGKILL.
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()},
		local.Options{Shell: "/bin/cat", Args: []string{}})
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	errc := make(chan error, 1)
	go func() {
		_, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{})
		errc <- err
	}()
	testkit.WaitFor(t, 10*time.Second, "the spawn to hold the fence", func() bool { return p.Sessions(h.owner) == 1 })
	if err := p.SetMode(h.owner, sandbox.ReadOnly); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetMode during a pending spawn: %v, want refused", err)
	}
	if err := p.SetMode(h.owner, sandbox.WorkspaceWrite); err != nil {
		t.Fatalf("SetMode without effective change during a pending spawn: %v", err)
	}
	var cat linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the sandboxed cat", func() bool {
		for _, s := range tagged(t, h.tag) {
			if s.Comm == "cat" {
				cat = s
				return true
			}
		}
		return false
	})
	select {
	case err := <-errc:
		t.Fatalf("the spawn settled early: %v", err)
	default:
	}
	cause := errors.New("test: stop the pending spawn")
	cancel(cause)
	if err := <-errc; !errors.Is(err, cause) {
		t.Fatalf("cancelled spawn: %v, want the cause", err)
	}
	// The failed spawn was rolled back and released its hold before the
	// spawn returned.
	if !gone(cat.Identity()) {
		t.Fatalf("the pending spawn's cat %d survived the rollback", cat.PID)
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("owner holds %d leases after the spawn failed", n)
	}
	if err := p.SetMode(h.owner, sandbox.ReadOnly); err != nil {
		t.Fatalf("SetMode after the spawn settled: %v", err)
	}
}
