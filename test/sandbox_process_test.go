//go:build linux

package test

// The processes of a sandboxed session (issue 5): the exact readiness
// tier, signals and job control, teardown and the end of the sandbox's
// pid namespace, seen in the host's /proc. Helpers: sandbox_test.go.

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestSandboxExactReadiness(t *testing.T) {
	t.Run("python3 REPL", func(t *testing.T) {
		requireProgram(t, "python3", "python3")
		h, _ := newSandboxed(t, readinessConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
		sp, _ := h.spawnSandboxed(h.owner)
		id := sp.ID()
		endsWith(t, "python3 -q", h.exactLine(id, "python3 -q", "python3"), ">>> ")
		res := h.exactLine(id, "1+1", "python3")
		if !hasLine(res.Viewport, "2") {
			t.Fatalf("1+1: viewport %q has no line 2", res.Viewport)
		}
		h.shellPrompt(id, "exit()", 0)
	})

	t.Run("less reads /dev/tty", func(t *testing.T) {
		// Inside the sandbox /dev is bwrap's; the host must still resolve
		// less's /dev/tty to this session's terminal.
		requireProgram(t, "less", "less")
		h, _ := newSandboxed(t, readinessConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()},
			local.Options{Env: map[string]string{"LESS": "", "LESSOPEN": ""}})
		sp, _ := h.spawnSandboxed(h.owner)
		id := sp.ID()
		if res := h.exactLine(id, "printf 'piped-%s\\n' 1 2 3 | less", "less"); !onScreen(res, "piped-3") {
			t.Fatalf("less: screen %+v has no line piped-3", res.Screen)
		}
		res := h.sendReq(id, messages.SendRequest{Text: "q"})
		if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Fatalf("q: %q exit %s, want the shell prompt with exit 0; viewport %q", res.WaitReason, codeString(res.ExitCode), res.Viewport)
		}
	})
}

// foregroundIn waits until the terminal of shell hands its foreground to a
// group running comm, among the members of POSIX session sid, and returns
// that group.
func foregroundIn(t testing.TB, shell, sid int, comm string) int {
	t.Helper()
	var pgid int
	testkit.WaitFor(t, 10*time.Second, "a foreground "+comm, func() bool {
		sh, err := linux.ReadStat(linux.FS{}, shell)
		if err != nil || sh.TPGID <= 0 || sh.TPGID == shell {
			return false
		}
		for _, s := range sessionMembers(t, sid) {
			if s.Comm == comm && s.PGRP == sh.TPGID {
				pgid = sh.TPGID
				return true
			}
		}
		return false
	})
	return pgid
}

func TestSandboxSignalsAndJobControl(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	ctx := testkit.Ctx(t)

	op, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid := foregroundIn(t, sp.PID(), wrapper.PID, "sleep")
	r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGINT)
	if err != nil || !r.Delivered || r.TargetPgid != pgid {
		t.Fatalf("SIGINT: %+v %v, want delivered to the sleep's group %d", r, err, pgid)
	}
	if res, err := op.Result(ctx); err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("interrupted send: %+v %v, want stdin_read exit 130", res, err)
	}

	// Job control: the shell kept the PTY as its controlling terminal
	// (bwrap ran without --new-session), so ^Z stops a job and the shell
	// takes the terminal back.
	op, err = h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid = foregroundIn(t, sp.PID(), wrapper.PID, "sleep")
	if r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGTSTP); err != nil || r.TargetPgid != pgid {
		t.Fatalf("SIGTSTP: %+v %v", r, err)
	}
	if res, err := op.Result(ctx); err != nil || res.ExitCode == nil || *res.ExitCode != 148 {
		t.Fatalf("stopped send: %+v %v, want exit 148", res, err)
	}
	if res := h.prompt(id, "jobs", 0); !strings.Contains(res.Viewport, "Stopped") {
		t.Fatalf("jobs: %q, want a stopped job", res.Viewport)
	}
	// fg continues it in the foreground; ^C ends it there.
	op, err = h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "fg", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := foregroundIn(t, sp.PID(), wrapper.PID, "sleep"); got != pgid {
		t.Fatalf("fg: foreground group %d, want the stopped job's %d", got, pgid)
	}
	testkit.WaitFor(t, 10*time.Second, "the job to run again", func() bool { return stat(t, pgid).State != 'T' })
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGINT); err != nil {
		t.Fatalf("SIGINT after fg: %v", err)
	}
	if res, err := op.Result(ctx); err != nil || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("fg then SIGINT: %+v %v, want exit 130", res, err)
	}

	// SIGKILL at the shell's own group is refused; the shell is alive.
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGKILL); !errors.Is(err, messages.ErrRefuseKillShell) {
		t.Fatalf("SIGKILL to the shell: %v, want ErrRefuseKillShell", err)
	}
	h.prompt(id, "true", 0)
}

func TestSandboxTeardown(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	ns := pidNS(sp.PID())
	h.prompt(id, "sleep 301 &", 0)
	h.prompt(id, "(trap '' TERM; sleep 302) &", 0)
	// A daemon: leaves the session and is orphaned. Without the sandbox it
	// would re-parent to init and escape; here it re-parents to the shell,
	// pid 1 of the namespace.
	h.prompt(id, "(setsid sleep 303 &); true", 0)

	var members []linux.Stat
	testkit.WaitFor(t, 10*time.Second, "three sleeps, one ignoring SIGTERM, one orphaned daemon", func() bool {
		members = inNamespace(t, ns)
		sleeps, deaf, daemon := 0, 0, 0
		for _, p := range members {
			if p.Comm != "sleep" {
				continue
			}
			sleeps++
			if ignoresSignal(p.PID, syscall.SIGTERM) {
				deaf++
			}
			if p.Session != wrapper.PID && p.PPID == sp.PID() {
				daemon++
			}
		}
		return sleeps == 3 && deaf == 1 && daemon == 1
	})

	report, err := h.svc.Session(h.owner, id).Close(testkit.Ctx(t), "")
	closed := !report.Joined
	if err != nil || !closed {
		t.Fatalf("Kill: closed=%v err=%v", closed, err)
	}
	if len(report.Survivors) != 0 || len(report.Killed) == 0 || report.Killed[len(report.Killed)-1] != sp.PID() {
		t.Fatalf("report %+v: want no survivors and the shell %d killed last", report, sp.PID())
	}
	for _, p := range members {
		if p.PID != sp.PID() && !slices.Contains(report.Killed, p.PID) {
			t.Errorf("report.Killed %v misses pid %d (%s)", report.Killed, p.PID, p.Comm)
		}
		if !gone(p.Identity()) {
			t.Errorf("pid %d (%s) survived Kill", p.PID, p.Comm)
		}
	}
	if !gone(wrapper.Identity()) {
		t.Errorf("bwrap %d survived Kill", wrapper.PID)
	}
	if left := inNamespace(t, ns); len(left) != 0 {
		t.Fatalf("the sandbox's pid namespace still has processes:\n  %s", describe(left))
	}
	if left := sessionMembers(t, wrapper.PID); len(left) != 0 {
		t.Fatalf("the terminal's session still has members:\n  %s", describe(left))
	}
	h.waitListEmpty("after Kill")
}

// When the sandboxed shell exits by itself, the kernel ends its pid
// namespace: a job it left running goes with it.
func TestSandboxShellExitEndsSandbox(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	ns := pidNS(sp.PID())
	h.prompt(sp.ID(), "nohup sleep 304 >/dev/null 2>&1 &", 0)
	testkit.WaitFor(t, 10*time.Second, "the background sleep", func() bool { return len(inNamespace(t, ns)) == 2 })
	res := h.send(sp.ID(), "exit 7")
	if res.WaitReason != messages.WaitSessionExit || res.Status.ExitCode == nil || *res.Status.ExitCode != 7 {
		t.Fatalf("exit 7: %+v, want session_exit with code 7", res)
	}
	testkit.WaitFor(t, 10*time.Second, "the sandbox's namespace to empty", func() bool { return len(inNamespace(t, ns)) == 0 })
	if !gone(wrapper.Identity()) {
		t.Fatalf("bwrap %d outlived its shell", wrapper.PID)
	}
	if _, err := sp.Close(testkit.Ctx(t), ""); err != nil {
		t.Fatalf("Kill after exit: %v", err)
	}
}

// With the host a child subreaper, the wrapper is the host's child and
// carries the session's tag: teardown must never take it for an adopted
// orphan. The shell ends by the hang-up (exit 129 passed on by bwrap), not
// by a signal teardown sent the wrapper.
func TestSandboxWithSubreaper(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{Subreaper: true})
	sp, wrapper := h.spawnSandboxed(h.owner)
	h.prompt(sp.ID(), "sleep 305 &", 0)
	report, err := sp.Close(testkit.Ctx(t), "")
	if err != nil || len(report.Survivors) != 0 {
		t.Fatalf("Kill: %+v %v", report, err)
	}
	if slices.Contains(report.Killed, wrapper.PID) {
		t.Fatalf("teardown signalled the wrapper %d: killed %v", wrapper.PID, report.Killed)
	}
	if st := report.Status; st.ExitCode == nil || *st.ExitCode != 129 {
		t.Fatalf("status %s, want exit code 129 (bash's hang-up)", st)
	}
	if !gone(wrapper.Identity()) {
		t.Fatalf("bwrap %d survived", wrapper.PID)
	}
}
