package test

// Daemons that leave the shell's session: caught with the subreaper on, a
// documented escape with it off, and never another session's.

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/teardown"
	"github.com/ptyactor/ptyactor/test/testkit"
	"golang.org/x/sys/unix"
)

// cmdline reports whether pid runs exactly argv.
func cmdline(pid int, argv ...string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && string(b) == strings.Join(argv, "\x00")+"\x00"
}

// waitDaemon waits for the process that `setsid sleep <arg> &` started from
// shell: it runs `sleep <arg>`, carries the test's tag, leads its own POSIX
// session, and has been orphaned: its parent is no longer in the shell's
// session (the setsid program that forked it has exited).
func waitDaemon(t *testing.T, h *harness, shell int, arg string) linux.Stat {
	t.Helper()
	var d linux.Stat
	testkit.WaitFor(t, 10*time.Second, "setsid sleep "+arg+" to leave its session and re-parent", func() bool {
		for _, s := range tagged(t, h.tag) {
			if s.Comm != "sleep" || !cmdline(s.PID, "sleep", arg) || s.Session != s.PID {
				continue
			}
			p, err := linux.ReadStat(linux.FS{}, s.PPID)
			if err == nil && p.Session != shell {
				d = s
				return true
			}
		}
		return false
	})
	return d
}

// background starts a background job and requires the send to settle on
// the prompt marker with status 0. When the job ends at once (setsid forks
// and exits), bash prints its "Done" notice between the marker and PS1;
// the marker still counts.
func (h *harness) background(id messages.SessionID, text string) {
	h.t.Helper()
	h.prompt(id, text, 0)
}

// zombieChildren lists this process's zombie children that started at or
// after since.
func zombieChildren(t *testing.T, since uint64) []linux.Stat {
	t.Helper()
	var out []linux.Stat
	for _, s := range mustProcs(t) {
		if s.PPID == os.Getpid() && s.State == 'Z' && s.StartTime >= since {
			out = append(out, s)
		}
	}
	return out
}

// startSibling starts `sleep 300` as a direct child of this process, in its
// own POSIX session, without any session tag: a process the host runs
// itself, which no teardown may touch. os/exec waits for it, so a teardown
// that reaped it would make that Wait fail.
func startSibling(t *testing.T) (*exec.Cmd, linux.Identity) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stat(t, cmd.Process.Pid).Identity()
}

// stopSibling kills the sibling and requires its own Wait to see that.
func stopSibling(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Kill()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("sibling Wait = %v; want its own status (killed by SIGKILL): was it reaped by a teardown?", err)
	}
}

// killSession closes a session and requires a clean close.
func (h *harness) killSession(id messages.SessionID) messages.CloseReport {
	h.t.Helper()
	report, err := h.svc.Session(h.owner, id).Close(testkit.Ctx(h.t), "")
	closed := !report.Joined
	if err != nil || !closed {
		h.t.Fatalf("Kill: closed=%v err=%v", closed, err)
	}
	if len(report.Survivors) != 0 {
		h.t.Fatalf("Kill report %+v: survivors", report)
	}
	return report
}

// reapedOrGone reports whether id left the process table entirely (or its
// pid now names another process): killed and reaped, not a zombie.
func reapedOrGone(id linux.Identity) bool {
	s, err := linux.ReadStat(linux.FS{}, id.PID)
	return errors.Is(err, linux.ErrNotFound) || (err == nil && s.StartTime != id.StartTime)
}

// With the subreaper on, a daemon that calls setsid re-parents to the host
// and is still killed when its session closes, and the host reaps it. The
// host's own child (no tag) is neither signalled nor reaped.
func TestSubreaperCatchesSetsidDaemon(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{Subreaper: true})
	sp := h.spawn(messages.SpawnRequest{})
	shell := stat(t, sp.PID())
	sibling, siblingID := startSibling(t)

	h.background(sp.ID(), "setsid sleep 301 &")
	d := waitDaemon(t, h, sp.PID(), "301")
	if d.PPID != os.Getpid() {
		t.Fatalf("daemon %d re-parented to %d, want this process %d (the subreaper)", d.PID, d.PPID, os.Getpid())
	}

	report := h.killSession(sp.ID())
	if !slices.Contains(report.Killed, d.PID) {
		t.Errorf("report.Killed %v misses the daemon %d", report.Killed, d.PID)
	}
	if !reapedOrGone(d.Identity()) {
		t.Errorf("daemon %d is still in /proc after Kill: %+v", d.PID, stat(t, d.PID))
	}
	if z := zombieChildren(t, shell.StartTime); len(z) != 0 {
		t.Errorf("zombie children of the test process after Kill:\n  %s", describe(z))
	}
	if slices.Contains(report.Killed, siblingID.PID) || gone(siblingID) {
		t.Fatalf("the host's own child %d was hit (killed %v)", siblingID.PID, report.Killed)
	}
	stopSibling(t, sibling)
}

// With the subreaper on, a double-forked member of the session re-parents
// to the host; when it exits while the session is open it is reaped then,
// not left a zombie of the host until the close. The host's own children
// keep their exit statuses for os/exec.
func TestSubreaperReapsExitedOrphansWhileOpen(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{Subreaper: true})
	sp := h.spawn(messages.SpawnRequest{})
	// The orphan lives until the test ends it, once it saw the re-parenting:
	// a short sleep could be reaped before the first look.
	res := h.prompt(sp.ID(), "( sleep 300 & echo orphan=$! )", 0)
	var pid int
	for _, l := range strings.Split(res.Viewport, "\n") {
		if v, ok := strings.CutPrefix(l, "orphan="); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	if pid <= 0 {
		t.Fatalf("no orphan pid in %q", res.Viewport)
	}
	var orphan linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the orphan to re-parent to this process", func() bool {
		s, err := linux.ReadStat(linux.FS{}, pid)
		orphan = s
		return err == nil && s.PPID == os.Getpid() && s.Session == sp.PID() && s.Comm == "sleep"
	})
	// A child of the host itself, exiting meanwhile, is not the reaper's.
	own := exec.Command("sh", "-c", "exit 7")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	if s, err := linux.ReadStat(linux.FS{}, pid); err != nil || s.StartTime != orphan.StartTime {
		t.Fatalf("the orphan %d is gone before the test ended it: %v", pid, err)
	}
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "the orphan reaped while its session is open", func() bool {
		_, err := linux.ReadStat(linux.FS{}, pid)
		return errors.Is(err, linux.ErrNotFound)
	})
	var ee *exec.ExitError
	if err := own.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("the host's own child: Wait = %v, want exit status 7 (its status was taken)", err)
	}
	h.prompt(sp.ID(), "echo still open", 0)
	h.killSession(sp.ID())
}

// With the subreaper off, the same daemon escapes, exactly as documented
// (local.Options.Subreaper): it is not found and never signalled. Nothing
// else is harmed either: a job of the test's other session and the host's
// own child outlive the close.
func TestSetsidDaemonEscapesWithoutSubreaper(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	a := h.spawn(messages.SpawnRequest{Name: "a"})
	b := h.spawn(messages.SpawnRequest{Name: "b"})
	sibling, siblingID := startSibling(t)
	h.prompt(b.ID(), "sleep 300 &", 0)
	var job linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the background sleep of session b", func() bool {
		for _, s := range sessionMembers(t, b.PID()) {
			if s.Comm == "sleep" {
				job = s
				return true
			}
		}
		return false
	})

	h.background(a.ID(), "setsid sleep 302 &")
	d := waitDaemon(t, h, a.PID(), "302")
	t.Cleanup(func() { killAndReap(d.Identity()) })

	report := h.killSession(a.ID())
	if slices.Contains(report.Killed, d.PID) {
		t.Fatalf("the daemon %d was killed with the subreaper off (killed %v); update the documentation", d.PID, report.Killed)
	}
	if gone(d.Identity()) {
		t.Fatalf("the daemon %d did not outlive its session with the subreaper off", d.PID)
	}
	// The documented escape is cleaned up by hand, by identity.
	killAndReap(d.Identity())
	testkit.WaitFor(t, 5*time.Second, "the escaped daemon to die", func() bool { return reapedOrGone(d.Identity()) || gone(d.Identity()) })

	for what, id := range map[string]linux.Identity{"session b's job": job.Identity(), "session b's shell": stat(t, b.PID()).Identity(), "the host's own child": siblingID} {
		if gone(id) {
			t.Errorf("%s (pid %d) was harmed by closing session a", what, id.PID)
		}
	}
	h.prompt(b.ID(), "true", 0)
	stopSibling(t, sibling)
	report = h.killSession(b.ID())
	if !slices.Contains(report.Killed, job.PID) || !gone(job.Identity()) {
		t.Fatalf("session b's job %d: killed %v, gone %v", job.PID, report.Killed, gone(job.Identity()))
	}
}

// killAndReap SIGKILLs id if it still has its identity, and reaps it if it
// is this process's child (it is once any test turned the subreaper on,
// which lasts for the whole process).
func killAndReap(id linux.Identity) {
	if err := (teardown.ProcSignaler{}).Signal(id, syscall.SIGKILL); err != nil && !errors.Is(err, teardown.ErrGone) {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s, err := linux.ReadStat(linux.FS{}, id.PID)
		if err != nil || s.StartTime != id.StartTime {
			return
		}
		if s.State == 'Z' {
			if s.PPID == os.Getpid() {
				var ws unix.WaitStatus
				_, _ = unix.Wait4(id.PID, &ws, unix.WNOHANG, nil)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two sessions of one subreaper host, each with a setsid daemon: closing
// one kills its own daemon only; the other lives until its own close.
func TestSubreaperTwoSessionsKeepTheirDaemons(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{Subreaper: true})
	a := h.spawn(messages.SpawnRequest{Name: "a"})
	b := h.spawn(messages.SpawnRequest{Name: "b"})
	h.background(a.ID(), "setsid sleep 303 &")
	h.background(b.ID(), "setsid sleep 304 &")
	da := waitDaemon(t, h, a.PID(), "303")
	db := waitDaemon(t, h, b.PID(), "304")
	for _, d := range []linux.Stat{da, db} {
		if d.PPID != os.Getpid() {
			t.Fatalf("daemon %d re-parented to %d, want this process %d", d.PID, d.PPID, os.Getpid())
		}
	}

	ra := h.killSession(a.ID())
	if !slices.Contains(ra.Killed, da.PID) || !reapedOrGone(da.Identity()) {
		t.Fatalf("session a's daemon %d: killed %v, reaped %v", da.PID, ra.Killed, reapedOrGone(da.Identity()))
	}
	if slices.Contains(ra.Killed, db.PID) || slices.Contains(ra.Killed, b.PID()) || gone(db.Identity()) {
		t.Fatalf("closing session a hit session b's daemon %d (killed %v)", db.PID, ra.Killed)
	}
	// Session b is untouched. (Its prompt may carry bash's "Done" notice
	// for the setsid job; the marker settles it all the same.)
	if res := h.prompt(b.ID(), "echo b-$((1+1))", 0); !hasLine(res.Viewport, "b-2") {
		t.Fatalf("session b after closing a: %+v", res)
	}

	rb := h.killSession(b.ID())
	if !slices.Contains(rb.Killed, db.PID) || !reapedOrGone(db.Identity()) {
		t.Fatalf("session b's daemon %d: killed %v, reaped %v", db.PID, rb.Killed, reapedOrGone(db.Identity()))
	}
}
