//go:build linux

package test

// Issue 21, item 15: a signal the kernel drops. In the sandbox the shell
// is pid 1 of its own pid namespace, and so is the program it exec's; the
// kernel drops every signal sent to a namespace's init that it has no
// handler for, bar SIGKILL (and SIGSTOP) from an ancestor namespace.
// terminal_signal must say so, not "delivered".

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// execAsInit has the sandboxed shell exec command and waits until the
// shell's process runs comm: pid 1 of the sandbox's pid namespace, the
// terminal's foreground group still the shell's. The send settles only
// when that program ends.
func (h *harness) execAsInit(sp *actors.Session, command, comm string) *actors.SendOp {
	h.t.Helper()
	op, err := sp.StartSend(testkit.Ctx(h.t), messages.SendRequest{Text: "exec " + command, Submit: true})
	if err != nil {
		h.t.Fatalf("StartSend(exec %s): %v", command, err)
	}
	testkit.WaitFor(h.t, 10*time.Second, "the shell's process to exec "+comm, func() bool {
		st, err := linux.ReadStat(linux.FS{}, sp.PID())
		return err == nil && st.Comm == comm
	})
	if ns := nsPIDs(h.t, sp.PID()); ns[len(ns)-1] != 1 {
		h.t.Fatalf("%s NSpid %v: want pid 1 of the sandbox's pid namespace", comm, ns)
	}
	if st := stat(h.t, sp.PID()); st.PGRP != sp.PID() || st.TPGID != sp.PID() {
		h.t.Fatalf("%s: group %d, terminal's foreground %d; want both %d", comm, st.PGRP, st.TPGID, sp.PID())
	}
	return op
}

// A program exec'd in place of the sandboxed shell has no handler for
// SIGTERM, SIGINT, SIGHUP or SIGTSTP: each is reported not delivered, with
// the reason, and the program runs on, untouched. SIGKILL at the shell's
// process stays refused; closing the session ends it, and nothing is left.
func TestSandboxSignalDroppedByNamespaceInit(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	ctx := testkit.Ctx(t)
	op := h.execAsInit(sp, "sleep 60", "sleep")
	sleep := stat(t, sp.PID())

	for _, sig := range []messages.Signal{messages.SIGTERM, messages.SIGINT, messages.SIGHUP, messages.SIGTSTP} {
		r, err := h.svc.Session(h.owner, id).Signal(ctx, sig)
		if err != nil {
			t.Fatalf("%s: %v", sig, err)
		}
		t.Logf("%s: %+v", sig, r)
		if r.Delivered || r.TargetPgid != sp.PID() {
			t.Fatalf("%s: %+v, want not delivered, to the group %d of the exec'd sleep", sig, r, sp.PID())
		}
		for _, want := range []string{"sleep (pid " + strconv.Itoa(sp.PID()) + ") runs in the shell's process, pid 1 of the sandbox's pid namespace", "has no handler for " + string(sig), "the kernel drops the signal", "closing the session ends it"} {
			if !strings.Contains(r.Reason, want) {
				t.Fatalf("%s: reason %q does not say %q", sig, r.Reason, want)
			}
		}
		// The kernel drops the signal in kill(2) itself: nothing is left
		// pending, and the same sleep runs on, neither ended nor stopped.
		st := stat(t, sp.PID())
		if st.Identity() != sleep.Identity() || !st.Alive() || st.State == 'T' || st.State == 't' {
			t.Fatalf("after %s: the sleep is %+v, want it running as before", sig, st)
		}
		if pending, err := linux.PendingSignals(linux.FS{}, sp.PID()); err != nil || pending != 0 {
			t.Fatalf("after %s: pending %#x %v, want nothing queued", sig, pending, err)
		}
	}
	if snap, err := h.svc.Session(h.owner, id).Describe(ctx); err != nil || snap.Status.Exited {
		t.Fatalf("Describe: %+v %v, want the session running", snap, err)
	}

	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGKILL); !errors.Is(err, messages.ErrRefuseKillShell) {
		t.Fatalf("SIGKILL at the exec'd sleep: %v, want ErrRefuseKillShell", err)
	}
	report, err := h.svc.Session(h.owner, id).Close(ctx, "")
	closed := !report.Joined
	if err != nil || !closed || len(report.Survivors) != 0 {
		t.Fatalf("Kill: closed=%v report=%+v err=%v, want closed with no survivors", closed, report, err)
	}
	// Settled at the session's end, or failed by the close: either way it
	// returns; only a hang (testkit.Ctx's deadline) would fail here.
	_, _ = op.Result(ctx)
	for _, id := range []linux.Identity{sleep.Identity(), wrapper.Identity()} {
		if !gone(id) {
			t.Fatalf("pid %d survived Kill", id.PID)
		}
	}
	h.waitListEmpty("after Kill")
}

// catchTERM arms a SIGTERM handler that exits 3, then says so and sleeps.
const catchTERM = `python3 -c 'import signal,sys,time; signal.signal(signal.SIGTERM, lambda *a: sys.exit(3)); print("ar" "med", flush=True); time.sleep(60)'`

// A pid 1 that catches the signal takes it: reported delivered, no reason,
// and the program's handler runs (it exits 3, ending the session).
func TestSandboxSignalCaughtByNamespaceInit(t *testing.T) {
	requireProgram(t, "python3", "python3")
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	ctx := testkit.Ctx(t)
	op := h.execAsInit(sp, catchTERM, "python3")
	testkit.WaitFor(t, 10*time.Second, "the handler to be armed", func() bool {
		p, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		return hasLine(p.Text, "armed")
	})
	if caught, err := linux.CaughtSignals(linux.FS{}, sp.PID()); err != nil || caught&(1<<(syscall.SIGTERM-1)) == 0 {
		t.Fatalf("python3 SigCgt %#x %v: want SIGTERM caught", caught, err)
	}

	r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGTERM)
	if err != nil || !r.Delivered || r.Reason != "" || r.TargetPgid != sp.PID() {
		t.Fatalf("SIGTERM: %+v %v, want delivered to %d with no reason", r, err, sp.PID())
	}
	res, err := op.Result(ctx)
	if err != nil || res.WaitReason != messages.WaitSessionExit || res.Status.ExitCode == nil || *res.Status.ExitCode != 3 {
		t.Fatalf("exec'd python3 after SIGTERM: %+v %v, want session_exit with its handler's code 3", res, err)
	}
	testkit.WaitFor(t, 10*time.Second, "bwrap to end with its pid 1", func() bool { return gone(wrapper.Identity()) })
	if _, err := h.svc.Session(h.owner, id).Close(ctx, ""); err != nil {
		t.Fatalf("Kill after exit: %v", err)
	}
	h.waitListEmpty("after Kill")
}
