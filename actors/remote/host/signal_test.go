//go:build linux

package host_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A signal the sandbox's pid 1 drops is reported so through a real host:
// not delivered, with the host's reason, across the wire. The host runs
// the default read-only sandbox (real bubblewrap), the shell exec's sleep,
// which becomes the namespace's init, and SIGTERM does nothing to it.
func TestRemoteSignalDroppedByNamespaceInit(t *testing.T) {
	if isolate(t) {
		return
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatalf("bwrap is not installed: apt-get install bubblewrap")
	}
	h := startHost(t, "-sandbox", "read-only", "-workspace", t.TempDir())
	svc, o := newClient(t, h)
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: messages.AnyHost})
	if err != nil {
		t.Fatal(err)
	}
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "exec sleep 60", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "the shell's process to exec sleep", func() bool {
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(sh.PID()) + "/comm")
		return err == nil && strings.TrimSpace(string(comm)) == "sleep"
	})
	r, err := sh.Signal(ctx, messages.SIGTERM)
	if err != nil || r.Delivered || r.TargetPgid != sh.PID() {
		t.Fatalf("SIGTERM: %+v %v, want not delivered to the group %d", r, err, sh.PID())
	}
	for _, want := range []string{"sleep (pid " + strconv.Itoa(sh.PID()) + ")", "pid 1 of the sandbox's pid namespace", "has no handler for SIGTERM"} {
		if !strings.Contains(r.Reason, want) {
			t.Fatalf("reason %q does not say %q", r.Reason, want)
		}
	}
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(sh.PID()) + "/comm"); err != nil || strings.TrimSpace(string(comm)) != "sleep" {
		t.Fatalf("after SIGTERM: %q %v, want the sleep running", comm, err)
	}
	if report, err := svc.Session(o, sh.ID()).Close(ctx, ""); err != nil || report.Joined || len(report.Survivors) != 0 {
		t.Fatalf("Close: %+v %v, want closed with no survivors", report, err)
	}
	_, _ = op.Result(ctx) // returns once the session ends; a hang fails on ctx
	testkit.WaitFor(t, 10*time.Second, "the sleep to be gone", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(sh.PID()))
		return err != nil
	})
}
