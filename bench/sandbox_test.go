package bench

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// The sandbox benchmarks price bubblewrap against danger-full-access in the
// same run and the same loop: one backend and one policy, two owners (one
// set to danger-full-access, one left at the workspace-write default),
// alternating iterations. The ratio is sandboxed median / full-access
// median.

// newSandboxService registers a bubblewrap-backed local backend and returns
// a full-access owner and a workspace-write owner.
func newSandboxService(b *testing.B) (svc *actors.Service, full, sandboxed messages.Owner) {
	b.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Fatal("bwrap is not installed: apt-get install bubblewrap")
	}
	policy, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	be := local.New(local.Options{Policy: policy, Sandbox: sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})})
	svc = testkit.Service(b, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{be}})
	full, sandboxed = testkit.Owner(b, svc, "full"), testkit.Owner(b, svc, "sandboxed")
	if err := policy.SetMode(full, sandbox.DangerFullAccess); err != nil {
		b.Fatal(err)
	}
	return svc, full, sandboxed
}

// reportSandbox: ratio is the sandboxed median over full access's.
func reportSandbox(b *testing.B, full, sandboxed []time.Duration) {
	reportMedians(b, [2]string{"full", "sandboxed"}, full, sandboxed, "ratio", func(f, s time.Duration) float64 { return float64(s) / float64(f) })
}

// BenchmarkSandboxOpenPaired: spawn until ready (the timed part), then
// close (untimed), alternating full access and workspace-write.
func BenchmarkSandboxOpenPaired(b *testing.B) {
	svc, fullOwner, sbOwner := newSandboxService(b)
	ctx := context.Background()
	open := func(o messages.Owner) time.Duration {
		t0 := time.Now()
		sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := sp.Close(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return d
	}
	var full, sandboxed []time.Duration
	for b.Loop() {
		full = append(full, open(fullOwner))
		sandboxed = append(sandboxed, open(sbOwner))
	}
	reportSandbox(b, full, sandboxed)
}

// BenchmarkSandboxSendEchoPaired: `echo hi` until ready in an open
// session, alternating a full-access and a workspace-write session.
func BenchmarkSandboxSendEchoPaired(b *testing.B) {
	svc, fullOwner, sbOwner := newSandboxService(b)
	ctx := context.Background()
	spawn := func(o messages.Owner) messages.SessionID {
		sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
		if err != nil {
			b.Fatal(err)
		}
		return sp.ID()
	}
	fullID, sbID := spawn(fullOwner), spawn(sbOwner)
	echo := func(o messages.Owner, id messages.SessionID) time.Duration {
		t0 := time.Now()
		res, err := svc.Session(o, id).Send(ctx, messages.SendRequest{Text: "echo hi", Submit: true})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("wait reason %s, want stdin_read", res.WaitReason)
		}
		return d
	}
	var full, sandboxed []time.Duration
	for b.Loop() {
		full = append(full, echo(fullOwner, fullID))
		sandboxed = append(sandboxed, echo(sbOwner, sbID))
	}
	reportSandbox(b, full, sandboxed)
}
