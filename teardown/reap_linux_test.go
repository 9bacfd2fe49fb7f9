//go:build linux

package teardown

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// forkChild starts sleep as a child of this process that os/exec knows
// nothing about, as an orphan adopted by a subreaper host would be.
func forkChild(t *testing.T) linux.Identity {
	t.Helper()
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	pid, err := syscall.ForkExec(path, []string{"sleep", "100"}, &syscall.ProcAttr{Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	id := identity(t, pid)
	track(id, "forked child")
	t.Cleanup(func() {
		_ = ProcSignaler{}.Signal(id, syscall.SIGKILL)
		_, _ = reapChild(pid)
	})
	return id
}

func TestReapOnlyCapturedZombieChildren(t *testing.T) {
	id := forkChild(t)
	r := newRun(linux.Identity{PID: 2}, Options{})
	r.seen = []linux.Identity{id}
	if got := r.reap(); len(got) != 0 {
		t.Fatalf("reap of a running child = %v", got)
	}
	if err := (ProcSignaler{}).Signal(id, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, watchdog, "the child to become a zombie", func() bool { return stat(t, id.PID).State == 'Z' })

	// Another identity for the same pid (a recycled pid) is never reaped.
	r.seen = []linux.Identity{{PID: id.PID, StartTime: id.StartTime + 1}}
	if got := r.reap(); len(got) != 0 {
		t.Fatalf("reap through a wrong identity = %v", got)
	}
	// Nor is anything through a fixture ProcReader.
	fixture := newRun(linux.Identity{PID: 2}, Options{Proc: newFakeProc()})
	fixture.seen = []linux.Identity{id}
	if got := fixture.reap(); len(got) != 0 {
		t.Fatalf("reap through a fixture = %v", got)
	}
	if s := stat(t, id.PID); s.State != 'Z' || s.StartTime != id.StartTime {
		t.Fatalf("zombie disturbed: %+v", s)
	}

	r.seen = []linux.Identity{id}
	if got := r.reap(); !slices.Equal(got, []int{id.PID}) {
		t.Fatalf("reap = %v, want [%d]", got, id.PID)
	}
	if _, err := linux.ReadStat(linux.FS{}, id.PID); !errors.Is(err, linux.ErrNotFound) {
		t.Fatalf("pid %d still in /proc after reap: %v", id.PID, err)
	}
	if ok, err := reapChild(id.PID); ok || err != nil {
		t.Fatalf("second reapChild = %v, %v; want nothing to reap", ok, err)
	}
}

func TestReapLeavesOtherChildren(t *testing.T) {
	// A child of this process that Tree never captured (one os/exec runs)
	// keeps its exit status for its own Wait, even as a zombie.
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := identity(t, cmd.Process.Pid)
	track(id, "os/exec child")
	_ = cmd.Process.Kill()
	testkit.WaitFor(t, watchdog, "the os/exec child to become a zombie", func() bool { return stat(t, id.PID).State == 'Z' })
	captured := forkChild(t)
	if err := (ProcSignaler{}).Signal(captured, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, watchdog, "the captured child to become a zombie", func() bool { return stat(t, captured.PID).State == 'Z' })
	r := newRun(linux.Identity{PID: 2}, Options{})
	r.seen = []linux.Identity{captured}
	if got := r.reap(); !slices.Equal(got, []int{captured.PID}) {
		t.Fatalf("reap = %v, want [%d]", got, captured.PID)
	}
	if s := stat(t, id.PID); s.State != 'Z' {
		t.Fatalf("the os/exec child was reaped by teardown: %+v", s)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("os/exec Wait = %v; want its own status, killed by SIGKILL", err)
	}
}

// ReapMembers takes zombie children that are members of a session the
// caller names, and never a session leader (a shell os/exec waits for).
func TestReapMembers(t *testing.T) {
	member := forkChild(t)
	sid := stat(t, member.PID).Session
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	lpid, err := syscall.ForkExec(path, []string{"sleep", "100"}, &syscall.ProcAttr{Env: os.Environ(), Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		t.Fatal(err)
	}
	leader := identity(t, lpid)
	track(leader, "forked session leader")
	t.Cleanup(func() {
		_ = ProcSignaler{}.Signal(leader, syscall.SIGKILL)
		_, _ = reapChild(lpid)
	})
	ours := func(s int) bool { return s == sid || s == lpid }

	if got, err := ReapMembers(nil, ours); err != nil || len(got) != 0 {
		t.Fatalf("ReapMembers with both running = %v, %v", got, err)
	}
	for _, id := range []linux.Identity{member, leader} {
		if err := (ProcSignaler{}).Signal(id, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, watchdog, "a zombie", func() bool { return stat(t, id.PID).State == 'Z' })
	}
	if got, err := ReapMembers(nil, func(int) bool { return false }); err != nil || len(got) != 0 {
		t.Fatalf("ReapMembers of no session = %v, %v", got, err)
	}
	got, err := ReapMembers(nil, ours)
	if err != nil || !slices.Equal(got, []int{member.PID}) {
		t.Fatalf("ReapMembers = %v, %v; want only the member %d", got, err, member.PID)
	}
	if _, err := linux.ReadStat(linux.FS{}, member.PID); !errors.Is(err, linux.ErrNotFound) {
		t.Fatalf("member %d still in /proc: %v", member.PID, err)
	}
	if s := stat(t, leader.PID); s.State != 'Z' {
		t.Fatalf("the session leader %d was taken: %+v", leader.PID, s)
	}
}

// waitLeaderExited waits until pid's main thread has exited while its other
// threads run on: /proc reads it as a zombie.
func waitLeaderExited(t *testing.T, pid int) {
	t.Helper()
	testkit.WaitFor(t, watchdog, "the helper's main thread to exit alone", func() bool {
		s := stat(t, pid)
		return s.State == 'Z' && s.Threads > 1
	})
}

// A process whose main thread exited reads as a zombie while the rest of it
// runs (a soak found node's threads still exiting after a kill). Tree
// signals it as alive and returns only once its last thread is gone.
func TestTreeKillsALeaderThatExitedAlone(t *testing.T) {
	root := startRoot(t, `TEARDOWN_TEST_HELPER=leaderexit GORACE=atexit_sleep_ms=0 "$HELPER_BIN" & echo "leader $!"; read -r _`)
	pid := root.readPids(t, "leader")["leader"]
	id := identity(t, pid)
	track(id, "leaderexit helper")
	waitLeaderExited(t, pid)

	rep, err := Tree(testkit.Ctx(t), root.id, realOpts(t))
	if err != nil {
		t.Fatalf("Tree: %v (report %+v)", err, rep)
	}
	if !slices.Contains(rep.Killed, pid) {
		t.Errorf("Killed = %v; want it to hold the helper %d", rep.Killed, pid)
	}
	if !quiet(id) {
		t.Fatalf("the helper's threads outlived Tree: %+v", stat(t, pid))
	}
}

// reap takes a zombie child only once its last thread is gone, and then
// does take it: a wait that finds nothing yet is not the end of it.
func TestReapWaitsForTheLastThread(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), helperEnv+"=leaderexit", "GORACE=atexit_sleep_ms=0")
	pid, err := syscall.ForkExec(exe, []string{exe}, &syscall.ProcAttr{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	id := identity(t, pid)
	track(id, "leaderexit helper")
	t.Cleanup(func() {
		_ = ProcSignaler{}.Signal(id, syscall.SIGKILL)
		testkit.WaitFor(t, watchdog, "the helper's threads to end", func() bool { return quiet(id) })
		_, _ = reapChild(pid)
	})
	waitLeaderExited(t, pid)

	r := newRun(linux.Identity{PID: 2}, Options{})
	r.seen = []linux.Identity{id}
	if got := r.reap(); len(got) != 0 {
		t.Fatalf("reap of a zombie leader with running threads = %v", got)
	}
	if err := (ProcSignaler{}).Signal(id, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, watchdog, "the helper's last thread to end", func() bool { return quiet(id) })
	if got := r.reap(); !slices.Equal(got, []int{pid}) {
		t.Fatalf("reap = %v, want [%d]", got, pid)
	}
	if _, err := linux.ReadStat(linux.FS{}, pid); !errors.Is(err, linux.ErrNotFound) {
		t.Fatalf("pid %d still in /proc after reap: %v", pid, err)
	}
}
