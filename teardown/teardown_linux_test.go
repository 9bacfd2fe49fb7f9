//go:build linux

package teardown

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// treeScript is a session's shell with every kind of member teardown must
// handle. Each line prints "name pid" for the test to check.
const treeScript = `
( trap '' TERM; exec sleep 100 ) & echo "ignterm $!"
( (sleep 100 & echo "double $!") & )
set -m; sleep 100 & echo "bgjob $!"; set +m
( exec setsid sleep 100 ) & echo "setsid $!"
( trap '' TERM; while :; do sleep 100 & sleep 0.02; done ) & echo "forker $!"
read -r _
`

// TestTreeRealProcessTree tears down a tree with members of every kind. A
// stopped member is TestTreeRealStoppedMember's: this tree ignores TERM, so
// Tree sends SIGKILL when the grace ends, and a stopped member would have to
// handle TERM within it.
func TestTreeRealProcessTree(t *testing.T) {
	root := startRoot(t, treeScript)
	pids := root.readPids(t, "ignterm", "double", "bgjob", "setsid", "forker")
	ids := make(map[string]linux.Identity)
	for name, pid := range pids {
		ids[name] = identity(t, pid)
		track(ids[name], name)
	}

	// A sibling in its own session that records any signal it gets.
	siblingMarker := marker(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sibling := startProcess(t, exec.Command(exe), "sibling", helperEnv+"=record", markerEnv+"="+siblingMarker)
	if line, err := sibling.out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("sibling: %q, %v", line, err)
	}

	// Wait until each member is in the shape the test is about.
	waitIgnoresTERM(t, pids["ignterm"])
	testkit.WaitFor(t, watchdog, "double fork to re-parent away", func() bool {
		stats, err := linux.ListStats(linux.FS{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range Descendants(stats, root.id.PID) {
			if s.PID == pids["double"] {
				return false
			}
		}
		return true
	})
	testkit.WaitFor(t, watchdog, "setsid child in its own session", func() bool { return stat(t, pids["setsid"]).Session == pids["setsid"] })
	testkit.WaitFor(t, watchdog, "forker to fork", func() bool {
		stats, _ := linux.ListStats(linux.FS{})
		return len(Descendants(stats, pids["forker"])) > 0
	})
	if s := stat(t, pids["double"]); s.Session != root.id.PID {
		t.Fatalf("double-forked sleep left the session: %+v", s)
	}
	if s := stat(t, pids["bgjob"]); s.PGRP != s.PID || s.PGRP == root.id.PID {
		t.Fatalf("background job not in its own process group: %+v", s)
	}

	before, err := linux.ListStats(linux.FS{})
	if err != nil {
		t.Fatal(err)
	}
	captured, err := Capture(linux.FS{}, root.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range captured {
		track(id, "captured")
	}
	for name, id := range ids {
		if !slices.Contains(captured, id) {
			t.Fatalf("Capture missed %s (%d): %v", name, id.PID, captured)
		}
	}

	start := time.Now()
	rep, err := Tree(testkit.Ctx(t), root.id, realOpts(t))
	t.Logf("Tree took %v; killed %d processes", time.Since(start), len(rep.Killed))
	if err != nil {
		t.Fatalf("Tree: %v (report %+v)", err, rep)
	}
	if len(rep.Survivors) != 0 {
		t.Fatalf("survivors: %v", rep.Survivors)
	}

	for name, id := range ids {
		if !slices.Contains(rep.Killed, id.PID) {
			t.Errorf("%s (%d) not in Killed %v", name, id.PID, rep.Killed)
		}
	}
	for _, id := range captured {
		if !quiet(id) {
			t.Errorf("captured pid %d still running: %+v", id.PID, stat(t, id.PID))
		}
	}
	after, err := Capture(linux.FS{}, root.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range after {
		track(id, "captured after")
		if !quiet(id) {
			t.Errorf("member %d still running after Tree: %+v", id.PID, stat(t, id.PID))
		}
	}

	// Children before parents, among the processes captured up front.
	index := func(pid int) int { return slices.Index(rep.Killed, pid) }
	for _, s := range before {
		if c, p := index(s.PID), index(s.PPID); c >= 0 && p >= 0 && slices.Contains(captured, s.Identity()) && c > p {
			t.Errorf("child %d signalled after its parent %d: %v", s.PID, s.PPID, rep.Killed)
		}
	}

	// The root was never signalled, and neither was the sibling session.
	if s := stat(t, root.id.PID); s.Identity() != root.id || !s.Alive() || s.State == 'T' {
		t.Errorf("root disturbed: %+v", s)
	}
	if slices.Contains(rep.Killed, root.id.PID) || slices.Contains(rep.Killed, sibling.id.PID) {
		t.Errorf("Killed %v names the root or the sibling", rep.Killed)
	}
	if quiet(sibling.id) {
		t.Errorf("sibling %d is gone", sibling.id.PID)
	}
	if b, err := os.ReadFile(siblingMarker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sibling received signals: %q", b)
	}

	root.stop(t)
	sibling.stop(t)
}

// refusing delegates to ProcSignaler except for one pid, which it refuses.
type refusing struct {
	pid   int
	inner Signaler
}

func (r refusing) Signal(id linux.Identity, sig syscall.Signal) error {
	if id.PID == r.pid {
		return errRefused
	}
	return r.inner.Signal(id, sig)
}

func TestTreeRealSurvivorThenRetry(t *testing.T) {
	root := startRoot(t, `( trap '' TERM; exec sleep 100 ) & echo "child $!"; read -r _`)
	child := root.readPids(t, "child")["child"]
	id := identity(t, child)
	track(id, "child")

	opts := realOpts(t)
	opts.Grace = 100 * time.Millisecond
	opts.Signaler = refusing{pid: child, inner: ProcSignaler{}}
	rep, err := Tree(testkit.Ctx(t), root.id, opts)
	var se *SurvivorsError
	if !errors.As(err, &se) || !errors.Is(err, ErrSurvivors) || !slices.Equal(se.Survivors, []int{child}) {
		t.Fatalf("Tree = %+v, %v; want *SurvivorsError{[%d]}", rep, err, child)
	}
	if quiet(id) {
		t.Fatal("the refused child is gone")
	}

	rep, err = Tree(testkit.Ctx(t), root.id, realOpts(t))
	if err != nil || !slices.Equal(rep.Killed, []int{child}) {
		t.Fatalf("retry: %+v, %v", rep, err)
	}
	if !quiet(id) {
		t.Fatal("child still running after retry")
	}
	root.stop(t)
}

// cancelling cancels a context right after its first SIGTERM.
type cancelling struct {
	cancel context.CancelCauseFunc
	cause  error
	inner  Signaler
}

func (c cancelling) Signal(id linux.Identity, sig syscall.Signal) error {
	err := c.inner.Signal(id, sig)
	if sig == syscall.SIGTERM {
		c.cancel(c.cause)
	}
	return err
}

func TestTreeRealCancel(t *testing.T) {
	root := startRoot(t, `( trap '' TERM; exec sleep 100 ) & echo "child $!"; read -r _`)
	child := root.readPids(t, "child")["child"]
	id := identity(t, child)
	track(id, "child")
	// A child that TERM kills at once could be gone before Tree's first
	// look, and Tree would return without seeing the cancel.
	waitIgnoresTERM(t, child)

	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	opts := realOpts(t)
	opts.Grace = time.Minute
	opts.Signaler = cancelling{cancel: cancel, cause: cause, inner: ProcSignaler{}}
	start := time.Now()
	_, err := Tree(ctx, root.id, opts)
	if !errors.Is(err, cause) {
		t.Fatalf("Tree = %v; want the cause", err)
	}
	// Tree's promise: cancelling ends the wait, which the TERM-ignoring
	// child would otherwise make last the whole grace.
	if d := time.Since(start); d >= opts.Grace {
		t.Fatalf("cancel took %v, the whole grace", d)
	}
	// Cancelling still sends SIGKILL; the TERM-ignoring child dies.
	testkit.WaitFor(t, watchdog, "child to die after cancel", func() bool { return quiet(id) })
	root.stop(t)
}

func TestTreeRealRootExitsDuringTeardown(t *testing.T) {
	// A shell whose foreground job is killed by teardown exits by itself;
	// the caller may reap it concurrently. Tree must finish without
	// adopting anything from the (possibly recycled) root pid.
	root := startRoot(t, `( trap '' TERM; exec sleep 100 ) & echo "child $!"; sleep 100 & echo "fg $!"; wait $!`)
	pids := root.readPids(t, "child", "fg")
	for name, pid := range pids {
		track(identity(t, pid), name)
	}
	// The TERM-ignoring child holds Tree in its grace while the root exits.
	waitIgnoresTERM(t, pids["child"])
	reaped := make(chan error, 1)
	go func() { reaped <- root.cmd.Wait() }()
	rep, err := Tree(testkit.Ctx(t), root.id, realOpts(t))
	select {
	case <-reaped:
	case <-time.After(watchdog):
		_ = root.cmd.Process.Kill()
		<-reaped
		t.Error("root did not exit after its foreground job was killed")
	}
	if err != nil || len(rep.Survivors) != 0 {
		t.Fatalf("Tree = %+v, %v", rep, err)
	}
}
