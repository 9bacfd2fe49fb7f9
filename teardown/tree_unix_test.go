//go:build linux || darwin

package teardown

import (
	"os"
	"slices"
	"testing"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// portableScript is a session's shell with the members both Linux and
// macOS can produce without extra tools (macOS has no setsid(1)). Each line
// prints "name pid".
const portableScript = `
( trap '' TERM; exec sleep 100 ) & echo "ignterm $!"
( (sleep 100 & echo "double $!") & )
TEARDOWN_TEST_HELPER=stop GORACE=atexit_sleep_ms=0 "$HELPER_BIN" & echo "stopped $!"
sleep 100 & echo "child $!"
read -r _
`

// TestTreeRealPortable tears down a real tree through the host's process
// table: /proc on Linux, sysctl kern.proc and getsid(2) on macOS. It is the
// real-process test written for both; the Linux-only ones go further
// (setsid escapes, adoption, reaping).
func TestTreeRealPortable(t *testing.T) {
	stopMarker := marker(t)
	root := startRoot(t, portableScript, markerEnv+"="+stopMarker)
	if id, err := Identify(root.id.PID); err != nil || id != root.id {
		t.Fatalf("Identify(root) = %+v, %v; want %+v", id, err, root.id)
	}
	pids := root.readPids(t, "ignterm", "double", "stopped", "child")
	ids := make(map[string]linux.Identity)
	for name, pid := range pids {
		ids[name] = identity(t, pid)
		track(ids[name], name)
	}
	waitFor(t, "helper to stop itself", func() bool { return stat(t, pids["stopped"]).State == 'T' })
	// The double fork's middle process exits, so "double" is found only as
	// a member of the root's session, not as a descendant.
	waitFor(t, "double fork to re-parent away", func() bool { return stat(t, pids["double"]).PPID != root.id.PID })
	if s := stat(t, pids["double"]); s.Session != root.id.PID {
		t.Fatalf("double fork = %+v; want it in session %d", s, root.id.PID)
	}

	rep, err := Tree(testContext(t), root.id, realOpts(t))
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
	// The stopped helper handled TERM: Tree continued it.
	waitFor(t, "the stopped helper's TERM marker", func() bool {
		b, err := os.ReadFile(stopMarker)
		return err == nil && string(b) == "TERM"
	})
}
