package test

// Issue 4, "Teardown, signals and disposal": daemons that leave the shell's
// session (caught with the subreaper on, a documented escape with it off,
// and never another session's), a real SIGINT for a raw-mode program on
// cancel, SIGTSTP before close, and a bounded close of a TERM-ignoring
// child.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
	closed, report, err := h.svc.Kill(testkit.Ctx(h.t), h.owner, id, "")
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
	res := h.prompt(sp.ID(), "( sleep 0.5 & echo orphan=$! )", 0)
	var pid int
	for _, l := range strings.Split(res.Viewport, "\n") {
		if v, ok := strings.CutPrefix(l, "orphan="); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	if pid <= 0 {
		t.Fatalf("no orphan pid in %q", res.Viewport)
	}
	testkit.WaitFor(t, 10*time.Second, "the orphan to re-parent to this process", func() bool {
		s, err := linux.ReadStat(linux.FS{}, pid)
		return err == nil && s.PPID == os.Getpid() && s.Session == sp.PID()
	})
	// A child of the host itself, exiting meanwhile, is not the reaper's.
	own := exec.Command("sh", "-c", "exit 7")
	if err := own.Start(); err != nil {
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

// rawProgram puts the terminal in raw mode (ISIG off: ^C is just a byte),
// reports that, and sleeps until a real SIGINT arrives; it then restores
// the terminal and exits 7.
const rawProgram = `import sys, termios, time, tty
fd = 0
saved = termios.tcgetattr(fd)
tty.setraw(fd)
print("ISIG-OFF" if not termios.tcgetattr(fd)[3] & termios.ISIG else "ISIG-ON", flush=True)
try:
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    print("INTERRUPTED-BY-SIGINT", flush=True)
    sys.exit(7)
`

// Cancelling a send to a raw-mode program that disabled ISIG interrupts it
// with a real SIGINT (a written ^C would only queue a byte it never reads),
// the send settles, and the session stays usable.
func TestCancelInterruptsRawModeProgram(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 10000 // only the cancel may end this send
	cfg.TimeoutMs = 20000
	h := newHarness(t, cfg, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	script := filepath.Join(t.TempDir(), "raw.py")
	if err := os.WriteFile(script, []byte(rawProgram), 0o644); err != nil {
		t.Fatal(err)
	}

	cause := errors.New("caller cancelled the raw-mode program")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	type sent struct {
		res messages.SendResult
		err error
	}
	done := make(chan sent, 1)
	go func() {
		res, err := h.svc.Send(ctx, h.owner, sp.ID(), messages.SendRequest{Text: "python3 " + script, Submit: true})
		done <- sent{res, err}
	}()
	testkit.WaitFor(t, 10*time.Second, "the program to report raw mode", func() bool {
		p, err := h.svc.Read(testkit.Ctx(t), h.owner, sp.ID(), messages.ReadRequest{})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if hasLine(p.Text, "ISIG-ON") {
			t.Fatalf("the program could not turn ISIG off: %q", p.Text)
		}
		return hasLine(p.Text, "ISIG-OFF")
	})
	var py linux.Stat
	for _, s := range sessionMembers(t, sp.PID()) {
		if strings.HasPrefix(s.Comm, "python3") {
			py = s
		}
	}
	if py.PID == 0 {
		t.Fatalf("no python3 in the session:\n  %s", describe(sessionMembers(t, sp.PID())))
	}
	cancel(cause)

	var r sent
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled send did not settle")
	}
	if !errors.Is(r.err, cause) {
		t.Fatalf("Send returned %v, want the cancel cause", r.err)
	}
	if r.res.WaitReason != messages.WaitStdinRead || r.res.ExitCode == nil || *r.res.ExitCode != 7 {
		t.Fatalf("cancelled send settled as %q exit %s, want stdin_read exit 7; viewport %q", r.res.WaitReason, codeString(r.res.ExitCode), r.res.Viewport)
	}
	// In raw mode a newline moves down without returning to the first
	// column: the line reads as the terminal shows it, indented.
	if !strings.Contains(r.res.Viewport, "\n"+strings.Repeat(" ", len("ISIG-OFF"))+"INTERRUPTED-BY-SIGINT\n") {
		t.Fatalf("the program did not get SIGINT: viewport %q", r.res.Viewport)
	}
	if !gone(py.Identity()) {
		t.Fatalf("python3 %d still runs after the cancel", py.PID)
	}
	res := h.sendWhenFree(sp.ID(), "echo after-$((2+3))")
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 || !hasLine(res.Viewport, "after-5") {
		t.Fatalf("session unusable after the cancel: %+v", res)
	}
}

// SIGTSTP stops the foreground job (bash reports it and prompts again); a
// close still ends the stopped job.
func TestSIGTSTPThenClose(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	op, err := h.svc.StartSend(ctx, h.owner, sp.ID(), messages.SendRequest{Text: "sleep 300", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid := foregroundSleep(t, sp.PID())
	var job linux.Stat
	for _, s := range sessionMembers(t, sp.PID()) {
		if s.Comm == "sleep" && s.PGRP == pgid {
			job = s
		}
	}
	r, err := h.svc.Signal(ctx, h.owner, sp.ID(), messages.SIGTSTP)
	if err != nil || !r.Delivered || r.TargetPgid != pgid {
		t.Fatalf("SIGTSTP: %+v %v, want delivered to pgid %d", r, err, pgid)
	}
	res, err := op.Result(ctx)
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 128+int(syscall.SIGTSTP) {
		t.Fatalf("stopped send: %+v %v, want stdin_read exit %d", res, err, 128+int(syscall.SIGTSTP))
	}
	if !strings.Contains(res.Viewport, "Stopped") {
		t.Fatalf("bash did not report the stopped job: viewport %q", res.Viewport)
	}
	if s := stat(t, job.PID); s.State != 'T' || s.StartTime != job.StartTime {
		t.Fatalf("job %d state %c, want stopped (T)", job.PID, s.State)
	}

	report := h.killSession(sp.ID())
	if !slices.Contains(report.Killed, job.PID) {
		t.Errorf("report.Killed %v misses the stopped job %d", report.Killed, job.PID)
	}
	if !gone(job.Identity()) {
		t.Fatalf("the stopped job %d survived Kill: %+v", job.PID, stat(t, job.PID))
	}
}

// A child that ignores SIGTERM costs the close one grace period, then
// SIGKILL ends it: Kill returns promptly with no survivors.
func TestCloseTERMIgnoringChildIsBounded(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.DisposeGraceMs = 300
	grace := messages.Ms(cfg.DisposeGraceMs)
	h := newHarness(t, cfg, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	h.prompt(sp.ID(), "(trap '' TERM; sleep 300) &", 0)
	var deaf linux.Stat
	testkit.WaitFor(t, 10*time.Second, "a sleep that ignores SIGTERM", func() bool {
		for _, s := range sessionMembers(t, sp.PID()) {
			if s.Comm == "sleep" && ignoresSignal(s.PID, syscall.SIGTERM) {
				deaf = s
				return true
			}
		}
		return false
	})

	start := time.Now()
	report := h.killSession(sp.ID())
	took := time.Since(start)
	t.Logf("Kill took %v with disposeGraceMs %d", took, cfg.DisposeGraceMs)
	if took < grace {
		t.Errorf("Kill took %v, less than the grace %v a TERM-ignoring child must be given", took, grace)
	}
	if took > grace+3*time.Second {
		t.Errorf("Kill took %v, want within a few seconds of the grace %v", took, grace)
	}
	if !slices.Contains(report.Killed, deaf.PID) || !gone(deaf.Identity()) {
		t.Fatalf("TERM-ignoring sleep %d: killed %v, gone %v", deaf.PID, report.Killed, gone(deaf.Identity()))
	}
}
