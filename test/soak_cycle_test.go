package test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// One cycle of the soak: soakCycle and the kinds of step it runs (the
// methods of soakRun), with the /proc looks they check by. The run itself
// (workers, the leak and growth bounds) is in soak_test.go.

// soakCycle opens a session, runs one kind against it, checks the
// outcome and closes it, checking the close left nothing.
func soakCycle(t testing.TB, h *harness, i int, k soakKind, r *rand.Rand) {
	t.Helper()
	// Not testkit.Ctx: its cleanup would keep every cycle's context until the
	// test ends, which the heap check would count.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{})
	if err != nil {
		t.Fatalf("cycle %d (%s): Spawn: %v", i, soakNames[k], err)
	}
	trackShell(sp.PID())
	c := soakRun{t: t, h: h, ctx: ctx, id: sp.ID(), pid: sp.PID(), i: i, kind: soakNames[k]}
	switch k {
	case soakEcho:
		c.echo()
	case soakCtxCancel:
		c.ctxCancel(r)
	case soakOpCancel:
		c.opCancel(r)
	case soakSignal:
		c.signal(r)
	case soakExit:
		c.exit(r)
	case soakFlood:
		c.flood()
	case soakPython:
		c.python(r)
	case soakKillMidSend:
		c.killMidSend()
		return // closed by the kind itself
	case soakOrphans:
		c.orphans(r)
	}
	c.close()
}

// soakRun is one cycle's session.
type soakRun struct {
	t    testing.TB
	h    *harness
	ctx  context.Context
	id   messages.SessionID
	pid  int
	i    int
	kind string
}

func (c *soakRun) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("cycle %d (%s): %s", c.i, c.kind, fmt.Sprintf(format, args...))
}

// prompt submits a shell command that must settle on the prompt with
// exit code want and the line wantLine in its output.
func (c *soakRun) prompt(text string, want int, wantLine string) {
	c.t.Helper()
	// A send right after a cancelled one waits in StartSend for the
	// interrupt to drain: SEND_ACTIVE here is a regression and fails.
	res, err := c.h.svc.Session(c.h.owner, c.id).Send(c.ctx, messages.SendRequest{Text: text, Submit: true})
	if err != nil {
		c.fatalf("Send(%q): %v", text, err)
	}
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != want || res.Status.Exited {
		c.fatalf("Send(%q) settled as %s exit %s status %s, want stdin_read exit %d; viewport %q", text, res.WaitReason, codeString(res.ExitCode), res.Status, want, tailOf(res.Viewport))
	}
	if wantLine != "" && !hasLine(res.Viewport, wantLine) {
		c.fatalf("Send(%q): no line %q in viewport %q", text, wantLine, tailOf(res.Viewport))
	}
}

// usable proves the session still answers after whatever the kind did.
func (c *soakRun) usable() {
	c.t.Helper()
	c.prompt(fmt.Sprintf("echo ok-%d-$((6*7))", c.i), 0, fmt.Sprintf("ok-%d-42", c.i))
}

// interrupted checks a send that a signal to its foreground job ended: it
// settled on the shell's prompt with the signal's exit status (128+n).
func (c *soakRun) interrupted(res messages.SendResult, err error, want int) {
	c.t.Helper()
	if err != nil {
		c.fatalf("interrupted send: %v", err)
	}
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != want || res.Status.Exited {
		c.fatalf("interrupted send settled as %s exit %s status %s, want stdin_read exit %d; viewport %q", res.WaitReason, codeString(res.ExitCode), res.Status, want, tailOf(res.Viewport))
	}
}

func (c *soakRun) echo() {
	c.prompt(fmt.Sprintf("echo soak-%d-$((2*3))", c.i), 0, fmt.Sprintf("soak-%d-6", c.i))
}

// ctxCancel ends the caller's context before the send (nothing may be
// written), after a random delay (before, during or after the write, or
// while the shell starts the command), or at a random moment once
// `sleep 30` runs in the foreground. Send must return exactly the
// caller's cause, with the settled result when the input was written.
func (c *soakRun) ctxCancel(r *rand.Rand) {
	cause := fmt.Errorf("soak cycle %d gave up", c.i)
	ctx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	mode := r.IntN(4) // 0: before the send, 1 and 2: after a delay, 3: once sleep runs
	delay := time.Duration(r.IntN(100)) * time.Millisecond
	switch mode {
	case 0:
		cancel(cause)
	case 3:
		delay = time.Duration(r.IntN(20)) * time.Millisecond
		go func() {
			// Only the cancellation is timed: the wait is on a condition.
			if sleepInForeground(c.pid, 10*time.Second) {
				time.Sleep(delay)
			}
			cancel(cause)
		}()
	default:
		t := time.AfterFunc(delay, func() { cancel(cause) })
		defer t.Stop()
	}
	res, err := c.h.svc.Session(c.h.owner, c.id).Send(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != cause {
		c.fatalf("Send returned %v, want exactly the caller's cause", err)
	}
	switch {
	case res.WaitReason == "" && mode != 3:
		// Aborted before anything was reserved: nothing written.
	case res.WaitReason == messages.WaitStdinRead && res.ExitCode != nil && *res.ExitCode == 130:
		// The command (or the shell about to start it) was interrupted.
	case res.WaitReason == messages.WaitStdinRead && res.ExitCode == nil && mode != 3:
		// Cancelled before the write, or the SIGINT reached bash's line
		// editor, which dropped the line: back at the prompt.
	case readlineTail(res, "sleep 30") && mode != 3:
		// The SIGINT reached the line editor mid-line: it ran the rest
		// it had already read (see TestCancelWhileCommandStarts).
	default:
		c.fatalf("cancelled send (mode %d, %s) settled as %q exit %s; viewport %q", mode, delay, res.WaitReason, codeString(res.ExitCode), tailOf(res.Viewport))
	}
	// sleep 30 ends on its own at 30 s: a result that late was not the
	// cancel's doing (a guard on what ended the send, not a speed figure).
	if res.Elapsed > 20*time.Second {
		c.fatalf("the cancel did not end sleep 30: settled after %s", res.Elapsed)
	}
	c.usable()
}

// opCancel cancels a running send through its SendOp, once the program
// is seen running: a sleep in the foreground, or an endless flood whose
// output is arriving.
func (c *soakRun) opCancel(r *rand.Rand) {
	flood := r.IntN(2) == 0
	text := "sleep 30"
	if flood {
		text = "yes soak"
	}
	op, err := c.h.svc.Session(c.h.owner, c.id).StartSend(c.ctx, messages.SendRequest{Text: text, Submit: true})
	if err != nil {
		c.fatalf("StartSend(%q): %v", text, err)
	}
	// Cancel once the program holds the terminal (ctxCancel and
	// TestCancelWhileCommandStarts cover the start-up window), and for
	// the flood once its output is arriving: the echo of the command line
	// itself does not count.
	if flood {
		foregroundComm(c.t, c.pid, "yes")
		testkit.WaitFor(c.t, 10*time.Second, "the flood's output", func() bool {
			rd, err := op.ReadOutput(c.ctx)
			if err != nil {
				c.fatalf("ReadOutput: %v", err)
			}
			return strings.Contains(rd.Delta, "soak\nsoak\n")
		})
	} else {
		foregroundSleep(c.t, c.pid)
	}
	if !op.Cancel() {
		c.fatalf("Cancel of a running %q refused", text)
	}
	res, err := op.Result(c.ctx)
	c.interrupted(res, err, 130)
	if op.Cancel() {
		c.fatalf("Cancel accepted after the send settled")
	}
	c.usable()
}

// signal sends SIGINT or SIGTERM to a foreground job through the service.
func (c *soakRun) signal(r *rand.Rand) {
	sig, want := messages.SIGINT, 130
	if r.IntN(2) == 0 {
		sig, want = messages.SIGTERM, 143
	}
	op, err := c.h.svc.Session(c.h.owner, c.id).StartSend(c.ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		c.fatalf("StartSend: %v", err)
	}
	pgid := foregroundSleep(c.t, c.pid)
	sr, err := c.h.svc.Session(c.h.owner, c.id).Signal(c.ctx, sig)
	if err != nil || !sr.Delivered || sr.TargetPgid != pgid {
		c.fatalf("Signal(%s): %+v %v, want delivered to the sleep's group %d", sig, sr, err, pgid)
	}
	res, err := op.Result(c.ctx)
	c.interrupted(res, err, want)
	c.usable()
}

// exit ends the shell itself, by exit status or by SIGKILL from inside.
func (c *soakRun) exit(r *rand.Rand) {
	text, code, sig := "exit 3", 3, ""
	if r.IntN(2) == 0 {
		text, code, sig = "kill -9 $$", -1, "SIGKILL"
	}
	res, err := c.h.svc.Session(c.h.owner, c.id).Send(c.ctx, messages.SendRequest{Text: text, Submit: true})
	if err != nil {
		c.fatalf("Send(%q): %v", text, err)
	}
	st := res.Status
	ok := res.WaitReason == messages.WaitSessionExit && st.Exited && st.Signal == sig
	if code >= 0 {
		ok = ok && st.ExitCode != nil && *st.ExitCode == code
	}
	if !ok {
		c.fatalf("Send(%q) settled as %s with status %s", text, res.WaitReason, st)
	}
	if _, err := c.h.svc.Session(c.h.owner, c.id).Send(c.ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrSessionExited) {
		c.fatalf("Send after the exit: %v, want ErrSessionExited", err)
	}
}

// flood prints 5 MiB through the terminal: the send settles on the prompt
// after all of it, its bounded buffer having dropped the front.
func (c *soakRun) flood() {
	res, err := c.h.svc.Session(c.h.owner, c.id).Send(c.ctx, messages.SendRequest{Text: "yes soak-flood | head -c " + soakFloodBytes, Submit: true})
	if err != nil {
		c.fatalf("flood: %v", err)
	}
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 || !res.Truncated {
		c.fatalf("flood settled as %s exit %s truncated %v", res.WaitReason, codeString(res.ExitCode), res.Truncated)
	}
	if !strings.Contains(res.Viewport, "soak-flood\n") || len(res.Viewport) > testkit.PTYConfig().MaxReadBytes {
		c.fatalf("flood viewport: %d bytes, tail %q", len(res.Viewport), tailOf(res.Viewport))
	}
	c.usable()
}

// python starts a REPL, evaluates one line, and then either exits it or
// leaves it running for the close to tear down.
func (c *soakRun) python(r *rand.Rand) {
	res, err := c.h.svc.Session(c.h.owner, c.id).Send(c.ctx, messages.SendRequest{Text: "python3 -q", Submit: true})
	if err != nil || res.WaitReason == messages.WaitTimeout || res.WaitReason == messages.WaitSessionExit {
		c.fatalf("python3 -q: %s %v; viewport %q", res.WaitReason, err, tailOf(res.Viewport))
	}
	// However the start settled, send nothing before the REPL prompts.
	testkit.WaitFor(c.t, 10*time.Second, "the python prompt", func() bool {
		p, err := c.h.svc.Session(c.h.owner, c.id).Read(c.ctx, messages.ReadRequest{Count: intp(1)})
		return err == nil && p.Text == ">>> "
	})
	a, b := r.IntN(1000), r.IntN(1000)
	res, err = c.h.svc.Session(c.h.owner, c.id).Send(c.ctx, messages.SendRequest{Text: fmt.Sprintf("print(%d*%d)", a, b), Submit: true})
	if err != nil || (res.WaitReason != messages.WaitStdinRead && res.WaitReason != messages.WaitInferredIdle) || res.ExitCode != nil {
		c.fatalf("print: %s exit %s %v", res.WaitReason, codeString(res.ExitCode), err)
	}
	if !hasLine(res.Viewport, strconv.Itoa(a*b)) {
		c.fatalf("print(%d*%d): viewport %q", a, b, res.Viewport)
	}
	if r.IntN(2) == 0 {
		c.prompt("exit()", 0, "")
	}
}

// killMidSend closes the session while a send runs. The send settles
// exactly once, with session_exit or a typed closing error, and the
// close leaves nothing.
func (c *soakRun) killMidSend() {
	op, err := c.h.svc.Session(c.h.owner, c.id).StartSend(c.ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		c.fatalf("StartSend: %v", err)
	}
	foregroundSleep(c.t, c.pid)
	var wg sync.WaitGroup
	var res messages.SendResult
	var rerr error
	wg.Go(func() { res, rerr = op.Result(c.ctx) })
	c.close()
	wg.Wait()
	switch {
	case rerr != nil && !errors.Is(rerr, messages.ErrSessionClosing) && !errors.Is(rerr, messages.ErrSessionExited):
		c.fatalf("send during Kill failed with %v, want a closing error", rerr)
	case rerr == nil && res.WaitReason != messages.WaitSessionExit:
		c.fatalf("send during Kill settled as %s, want session_exit", res.WaitReason)
	}
	select {
	case <-op.Done():
	default:
		c.fatalf("Result returned before Done closed")
	}
	if op.Cancel() {
		c.fatalf("Cancel accepted after the send settled")
	}
}

// close kills the session and checks that the report names no survivor
// and that nothing of the shell's POSIX session is alive.
// orphans double-forks short sleeps, which re-parent to the host (the
// subreaper) and exit while the session is open, and starts a setsid
// daemon for the close to find. The exited ones must be reaped before the
// close: no zombie child of this process may stay in the session.
func (c *soakRun) orphans(r *rand.Rand) {
	c.t.Helper()
	c.prompt(fmt.Sprintf("for i in 1 2 3; do ( sleep 0.0%d & ); done; setsid sleep 30 & echo forked-%d", r.IntN(5), c.i), 0, fmt.Sprintf("forked-%d", c.i))
	testkit.WaitFor(c.t, 10*time.Second, "the exited orphans reaped", func() bool {
		for _, p := range mustProcs(c.t) {
			if p.Session == c.pid && p.PID != c.pid {
				return false // running, or a zombie nobody reaped
			}
		}
		return true
	})
}

func (c *soakRun) close() {
	c.t.Helper()
	report, err := c.h.svc.Session(c.h.owner, c.id).Close(c.ctx, "soak")
	closed := !report.Joined
	if err != nil || !closed {
		c.fatalf("Kill: closed=%v err=%v", closed, err)
	}
	if len(report.Survivors) != 0 || !report.Status.Exited {
		c.fatalf("close report %+v: want no survivors and an exited shell", report)
	}
	if s := sessionMembers(c.t, c.pid); len(s) != 0 {
		c.fatalf("the shell's session still has members after Kill:\n  %s", describe(s))
	}
}

// foregroundComm waits until a process named comm leads the foreground
// group of shell's terminal.
func foregroundComm(t testing.TB, shell int, comm string) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, "a foreground "+comm+" in the shell's terminal", func() bool {
		return fgComm(shell, comm)
	})
}

// sleepInForeground is foregroundComm for a goroutine that cannot fail the
// test: it reports whether sleep took the terminal before timeout.
func sleepInForeground(shell int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !fgComm(shell, "sleep") {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

func fgComm(shell int, comm string) bool {
	sh, err := linux.ReadStat(linux.FS{}, shell)
	if err != nil || sh.TPGID <= 0 || sh.TPGID == shell {
		return false
	}
	s, err := linux.ReadStat(linux.FS{}, sh.TPGID)
	return err == nil && s.Comm == comm && s.PGRP == sh.TPGID && s.Session == shell
}
