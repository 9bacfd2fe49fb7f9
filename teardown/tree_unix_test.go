//go:build linux || darwin

package teardown

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// portableScript is a session's shell with the members both Linux and
// macOS can produce without extra tools (macOS has no setsid(1)). Each line
// prints "name pid".
const portableScript = `
( trap '' TERM; exec sleep 100 ) & echo "ignterm $!"
( (sleep 100 & echo "double $!") & )
sleep 100 & echo "child $!"
read -r _
`

// TestTreeRealPortable tears down a real tree through the host's process
// table: /proc on Linux, sysctl kern.proc and getsid(2) on macOS. It is the
// real-process test written for both; the Linux-only ones go further
// (setsid escapes, adoption, reaping).
func TestTreeRealPortable(t *testing.T) {
	root := startRoot(t, portableScript)
	if id, err := Identify(root.id.PID); err != nil || id != root.id {
		t.Fatalf("Identify(root) = %+v, %v; want %+v", id, err, root.id)
	}
	pids := root.readPids(t, "ignterm", "double", "child")
	ids := make(map[string]linux.Identity)
	for name, pid := range pids {
		ids[name] = identity(t, pid)
		track(ids[name], name)
	}
	// The TERM-ignoring member takes Tree through the grace to SIGKILL.
	waitIgnoresTERM(t, pids["ignterm"])
	// The double fork's middle process exits, so "double" is found only as
	// a member of the root's session, not as a descendant.
	testkit.WaitFor(t, watchdog, "double fork to re-parent away", func() bool { return stat(t, pids["double"]).PPID != root.id.PID })
	if s := stat(t, pids["double"]); s.Session != root.id.PID {
		t.Fatalf("double fork = %+v; want it in session %d", s, root.id.PID)
	}

	rep, err := Tree(testkit.Ctx(t), root.id, realOpts(t))
	if err != nil {
		t.Fatalf("Tree: %v (report %+v)", err, rep)
	}
	for name, id := range ids {
		if !quiet(id) {
			t.Errorf("%s (pid %d) still running: %+v", name, id.PID, stat(t, id.PID))
		}
		if !slices.Contains(rep.Killed, id.PID) {
			t.Errorf("%s (pid %d) missing from Killed %v", name, id.PID, rep.Killed)
		}
	}
	if slices.Contains(rep.Killed, root.id.PID) || quiet(root.id) {
		t.Fatalf("the root was signalled or is gone: report %+v", rep)
	}
}

// TestTreeRealStoppedMember proves that Tree continues a stopped member
// after SIGTERM, so it handles TERM itself instead of sitting out the grace
// until SIGKILL. The helper stops itself; once continued, its TERM handler
// writes the marker and exits.
//
// Nothing in this tree ignores TERM, so Tree returns as soon as the helper
// has exited: the grace costs nothing and is long only so that a loaded
// machine keeping the continued helper off the CPU cannot turn the hand-off
// into a SIGKILL. It stays below testContext's deadline, so a missing
// SIGCONT shows up as a missing marker.
func TestTreeRealStoppedMember(t *testing.T) {
	stopMarker := marker(t)
	root := startRoot(t, `TEARDOWN_TEST_HELPER=stop GORACE=atexit_sleep_ms=0 "$HELPER_BIN" & echo "stopped $!"; read -r _`,
		markerEnv+"="+stopMarker)
	pid := root.readPids(t, "stopped")["stopped"]
	id := identity(t, pid)
	track(id, "stopped")
	testkit.WaitFor(t, watchdog, "helper to stop itself", func() bool { return stat(t, pid).State == 'T' })

	opts := realOpts(t)
	opts.Grace = watchdog / 2
	rep, err := Tree(testkit.Ctx(t), root.id, opts)
	if err != nil {
		t.Fatalf("Tree: %v (report %+v)", err, rep)
	}
	if !slices.Equal(rep.Killed, []int{pid}) {
		t.Errorf("Killed = %v; want [%d]", rep.Killed, pid)
	}
	if !quiet(id) {
		t.Errorf("helper (pid %d) still running: %+v", pid, stat(t, pid))
	}
	// The helper wrote the marker before it exited, and Tree returned once
	// it had exited.
	if b, err := os.ReadFile(stopMarker); err != nil || string(b) != "TERM" {
		t.Errorf("stopped helper did not handle TERM (marker %q, %v): SIGCONT missing?", b, err)
	}
	if quiet(root.id) {
		t.Errorf("the root is gone: report %+v", rep)
	}
}

// waitIgnoresTERM waits until pid, a subshell that traps TERM to be ignored
// and execs sleep, ignores SIGTERM: the shell prints the pid when it forks
// the subshell, before the trap has run. On Linux the SigIgn mask says so; on
// macOS, which has no /proc, the exec of sleep does (the trap ran first, and
// an ignored signal stays ignored across exec).
func waitIgnoresTERM(t *testing.T, pid int) {
	t.Helper()
	testkit.WaitFor(t, watchdog, fmt.Sprintf("pid %d to ignore SIGTERM", pid), func() bool {
		if runtime.GOOS != "linux" {
			return stat(t, pid).Comm == "sleep"
		}
		set, err := linux.IgnoredSignals(linux.FS{}, pid)
		if err != nil {
			t.Fatalf("SigIgn of pid %d: %v", pid, err)
		}
		return set&(1<<(syscall.SIGTERM-1)) != 0
	})
}
