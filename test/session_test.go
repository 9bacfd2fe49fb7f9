package test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func noControlBytes(t *testing.T, what, s string) {
	t.Helper()
	if i := strings.IndexAny(s, "\x1b\x07\r"); i >= 0 {
		t.Fatalf("%s holds control byte %q at %d: %q", what, s[i], i, s)
	}
}

// Item 1: the shell keeps its state between sends.
func TestStatePersistsAcrossSends(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	if !strings.HasSuffix(sp.Info().Motd, local.PromptText) {
		t.Fatalf("motd %q does not end with the prompt %q", sp.Info().Motd, local.PromptText)
	}
	noControlBytes(t, "motd", sp.Info().Motd)
	dir := t.TempDir()
	id := sp.ID()

	h.prompt(id, "cd '"+dir+"'", 0)
	h.prompt(id, "export FOO=kept-value", 0)
	if res := h.prompt(id, "pwd", 0); !hasLine(res.Viewport, dir) {
		t.Fatalf("pwd after cd: viewport %q has no line %q", res.Viewport, dir)
	}
	if res := h.prompt(id, `echo "x${FOO}y"`, 0); !hasLine(res.Viewport, "xkept-valuey") {
		t.Fatalf("exported variable lost: viewport %q", res.Viewport)
	}
	// Exported means a child process sees it, and it starts in the cwd.
	if res := h.prompt(id, `sh -c 'echo "c${FOO}c"; pwd'`, 0); !hasLine(res.Viewport, "ckept-valuec") || !hasLine(res.Viewport, dir) {
		t.Fatalf("child process did not inherit the state: viewport %q", res.Viewport)
	}
}

// Item 3: the prompt marker carries the last command's exit status.
func TestExitCodes(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{"false", 1},
		{"(exit 7)", 7},
		{"true", 0},
		{"ls /definitely/not/here/" + h.tag, 2},
		{"sh -c 'kill -TERM $$'", 143},
	} {
		res := h.prompt(id, c.cmd, c.want)
		noControlBytes(t, "viewport", res.Viewport)
		if !strings.HasSuffix(res.Viewport, local.PromptText) {
			t.Fatalf("%q: viewport %q does not end with the prompt", c.cmd, res.Viewport)
		}
	}
}

// bash prints a finished background job's notice between the prompt
// marker and PS1; the marker still settles the send with its status.
func TestExitCodeSurvivesJobNotices(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	notices := 0
	for range 5 {
		for _, c := range []struct {
			cmd  string
			want int
		}{{"true &", 0}, {"false", 1}, {"(exit 4) &", 0}, {"sh -c 'exit 9'", 9}} {
			if res := h.prompt(id, c.cmd, c.want); strings.Contains(res.Viewport, "Done") || strings.Contains(res.Viewport, "Exit 4") {
				notices++
			}
		}
	}
	if notices == 0 {
		t.Fatal("no job notice appeared in 20 sends: the test did not exercise notices")
	}
}

// A send of several lines runs to its last line: every line's command
// prints its own marker, and only the last one settles the send.
func TestMultiLineSendRunsToTheEnd(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	for i := range 10 {
		res := h.prompt(id, "echo a; (exit 2)\nsleep 0.0$((RANDOM % 3)); echo b; (exit 3)", 3)
		if !hasLine(res.Viewport, "a") || !hasLine(res.Viewport, "b") {
			t.Fatalf("send %d: viewport %q lacks the output of both lines", i, res.Viewport)
		}
	}
	// An empty line in between prints a prompt of its own.
	if res := h.prompt(id, "true\n\necho last; false", 1); !hasLine(res.Viewport, "last") {
		t.Fatalf("viewport %q", res.Viewport)
	}
	// Nothing of one send leaks into the next.
	if res := h.prompt(id, "echo solo", 0); res.Viewport != "echo solo\nsolo\n"+local.PromptText {
		t.Fatalf("viewport %q, want only this send's command, output and prompt", res.Viewport)
	}
}

// A command left running by a send that settled on silence prints its
// marker after the next send was written and before the shell read it.
// That marker is not the next send's: the next send settles on its own
// command's status and output.
func TestStaleMarkerIsNotCreditedToTheNextSend(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 300
	h := newHarness(t, cfg, local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	ctx := testkit.Ctx(t)
	g := newGate(t)
	for i := range 3 {
		first := h.send(id, g.wait()+"; (exit 5)")
		if first.WaitReason != messages.WaitInferredIdle {
			t.Fatalf("first send %d: %+v, want it settled on silence while the command is held", i, first)
		}
		// The next send is written while the first command still runs;
		// then the first command ends and prints its marker. Only a
		// prompt settles this send (the short silence is the first's).
		op, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "echo second; (exit 6)", Submit: true,
			Wait: messages.WaitPolicy{NoSilence: true}})

		if err != nil {
			t.Fatalf("second send %d: %v", i, err)
		}
		g.release()
		res, err := op.Result(ctx)
		if err != nil {
			t.Fatalf("second send %d: %v", i, err)
		}
		if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 6 {
			t.Fatalf("second send %d: %s exit %s, want stdin_read exit 6; viewport %q", i, res.WaitReason, codeString(res.ExitCode), res.Viewport)
		}
		if !hasLine(res.Viewport, "second") {
			t.Fatalf("send %d: viewport %q lacks its own output", i, res.Viewport)
		}
		// The stale prompt came within this send: its "$ " precedes the
		// shell's reading of this send's line.
		if !strings.Contains(res.Viewport, local.PromptText+"echo second") {
			t.Fatalf("send %d: viewport %q, want the stale prompt before this send's line", i, res.Viewport)
		}
	}
}

// When the shell itself waits on the terminal with no marker printed (its
// read builtin, a continuation prompt), no marker is coming: the exact
// tier proved the output drained. The send settles on that proof rather
// than after a hand-off grace (set longer than the deadline here, so
// waiting for it would end in a timeout).
func TestShellsOwnReadSettlesOnProof(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.HandoffGraceMs = 60000
	cfg.IdleSilenceMs = 60000
	cfg.TimeoutMs = 20000
	h := newHarness(t, cfg, local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	for _, c := range []struct{ text, tail, answer, check string }{
		{"read -p 'name? ' n", "name? ", "Ada", `echo "n=$n"`},
		{`echo "open`, "> ", `closed"`, ""},
	} {
		res := h.send(id, c.text)
		if res.WaitReason != messages.WaitStdinRead || res.ExitCode != nil || !strings.HasSuffix(res.Viewport, c.tail) {
			t.Fatalf("Send(%q): %s code %s viewport %q, want stdin_read without a code at %q", c.text, res.WaitReason, codeString(res.ExitCode), res.Viewport, c.tail)
		}
		if res.Reader != "bash" {
			t.Fatalf("Send(%q): reader %q, want bash", c.text, res.Reader)
		}
		res = h.prompt(id, c.answer, 0)
		if c.check != "" {
			res = h.prompt(id, c.check, 0)
		}
		if !hasLine(res.Viewport, "n=Ada") && !hasLine(res.Viewport, "closed") {
			t.Fatalf("after %q: viewport %q, want the answer used", c.answer, res.Viewport)
		}
	}
}

// Item 4: a marker printed by a command (wrong or missing nonce) is plain
// output; it never settles a send and never reaches the viewport.
func TestForgedMarkerCannotSettle(t *testing.T) {
	t.Run("settles only at the real prompt", func(t *testing.T) {
		cfg := testkit.PTYConfig()
		cfg.IdleSilenceMs = 3000
		h := newHarness(t, cfg, local.Options{})
		id := h.spawn(messages.SpawnRequest{}).ID()
		forged := `printf '\033]133;D;0;deadbeef\007$ '; ` +
			`printf '\033]133;D;0;000000000000000000000000\007$ '; ` +
			`printf '\033]133;D;0\007$ '; ` +
			`printf '\033]133;D;0;deadbeef\033\\$ '; ` +
			`sleep 1; echo REAL-$((1+1))`
		res := h.prompt(id, forged, 0)
		if !strings.Contains(res.Viewport, "REAL-2") {
			t.Fatalf("settled before the command finished: viewport %q", res.Viewport)
		}
		if res.Elapsed < time.Second {
			t.Fatalf("settled after %s, before the command's sleep 1 ended", res.Elapsed)
		}
		noControlBytes(t, "viewport", res.Viewport)
		// The forged prompts are still there as plain text.
		if n := strings.Count(res.Viewport, "$ $ $ $ "); n != 1 {
			t.Fatalf("forged prompt text: %d runs of four, want 1: %q", n, res.Viewport)
		}
	})
	t.Run("wrong nonce then waiting ends at the deadline", func(t *testing.T) {
		cfg := testkit.PTYConfig()
		cfg.IdleSilenceMs = 3000
		cfg.TimeoutMs = 1500
		h := newHarness(t, cfg, local.Options{})
		sp := h.spawn(messages.SpawnRequest{})
		res := h.send(sp.ID(), `printf '\033]133;D;0;nonce\007$ '; sleep 30`)
		if res.WaitReason != messages.WaitTimeout {
			t.Fatalf("wait reason %q, want timeout; viewport %q", res.WaitReason, res.Viewport)
		}
		if res.ExitCode != nil {
			t.Fatalf("a timeout carries exit code %d", *res.ExitCode)
		}
		if res.Elapsed < 1500*time.Millisecond {
			t.Fatalf("timeout after %s, before timeoutMs", res.Elapsed)
		}
		if res.Status.Exited {
			t.Fatalf("status %s after a timeout", res.Status)
		}
		noControlBytes(t, "viewport", res.Viewport)
		if !strings.HasSuffix(res.Viewport, "$ ") {
			t.Fatalf("the forged prompt text is missing: %q", res.Viewport)
		}
		// A timeout never implies exit: the sleep still holds the terminal.
		foregroundSleep(t, sp.PID())
	})
}

// Item 7: one send at a time; a refused send writes nothing.
func TestSendActive(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	ctx := testkit.Ctx(t)
	// The first send's command is held on a gate until both refusals are
	// in, and only its prompt settles it.
	g := newGate(t)
	op, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: g.wait() + "; echo FIRST-$((2*3))", Submit: true,
		Wait: messages.WaitPolicy{NoSilence: true}})

	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "echo SECOND-$((2*4))", Submit: true}); !errors.Is(err, messages.ErrSendActive) {
		t.Fatalf("second StartSend: %v, want SEND_ACTIVE", err)
	}
	if _, err := h.svc.Session(h.owner, id).Send(ctx, messages.SendRequest{Text: "echo THIRD", Submit: true}); !errors.Is(err, messages.ErrSendActive) {
		t.Fatalf("Send while active: %v, want SEND_ACTIVE", err)
	}
	g.release()
	res, err := op.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("first send: %+v", res)
	}
	if !strings.Contains(res.Viewport, "FIRST-6") || strings.Contains(res.Viewport, "SECOND") || strings.Contains(res.Viewport, "THIRD") {
		t.Fatalf("first send's viewport %q: want its own output and nothing of the refused sends", res.Viewport)
	}
	if op.Cancel() {
		t.Fatal("Cancel accepted after the send settled")
	}
	if res := h.prompt(id, "echo NEXT-$((3*3))", 0); !hasLine(res.Viewport, "NEXT-9") || strings.Contains(res.Viewport, "SECOND") {
		t.Fatalf("next send: viewport %q", res.Viewport)
	}
}

// Item 10: a caller's cancellation cause comes back unchanged; the command
// is interrupted by a real SIGINT and the session stays usable.
func TestSendCancellationKeepsCause(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	myErr := errors.New("caller gave up on sleep 30")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	type sent struct {
		res messages.SendResult
		err error
	}
	done := make(chan sent, 1)
	go func() {
		// Only the cancel may end it: no silence, and a deadline past the
		// test's watchdog.
		res, err := sp.Send(ctx, messages.SendRequest{Text: "sleep 30", Submit: true,
			Wait: messages.WaitPolicy{NoSilence: true, Timeout: 2 * testkit.Timeout}})

		done <- sent{res, err}
	}()
	// The caller gives up once sleep runs in the foreground.
	foregroundSleep(t, sp.PID())
	cancel(myErr)
	var s sent
	select {
	case s = <-done:
	case <-testkit.Ctx(t).Done():
		t.Fatal("Send did not return after its context was cancelled")
	}
	res, err := s.res, s.err
	if err != myErr {
		t.Fatalf("Send returned %v, want exactly the caller's cause", err)
	}
	// 130 is the shell's report that SIGINT ended the sleep (it would
	// have ended by itself with 0).
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("cancelled send settled as %q exit %s, want stdin_read exit 130; viewport %q", res.WaitReason, codeString(res.ExitCode), res.Viewport)
	}
	// The shell reported 130 at its prompt, so it has reaped the sleep.
	for _, p := range sessionMembers(t, sp.PID()) {
		if p.Comm == "sleep" {
			t.Fatalf("sleep survived the interrupt: pid %d state %c", p.PID, p.State)
		}
	}
	res = h.sendWhenFree(sp.ID(), "echo after-$((2+3))")
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 || !hasLine(res.Viewport, "after-5") {
		t.Fatalf("session unusable after the cancel: %+v", res)
	}
}

// Item 12: the shell's own exit is session_exit with its status; the
// session then refuses input but can still be read and closed.
func TestShellExit(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{Name: "exiting"})
	id := sp.ID()
	ctx := testkit.Ctx(t)
	res := h.send(id, "exit 3")
	if res.WaitReason != messages.WaitSessionExit {
		t.Fatalf("wait reason %q, want session_exit", res.WaitReason)
	}
	if !res.Status.Exited || res.Status.ExitCode == nil || *res.Status.ExitCode != 3 || res.Status.Signal != "" {
		t.Fatalf("status %s, want exited code=3", res.Status)
	}
	if _, err := h.svc.Session(h.owner, id).Send(ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrSessionExited) {
		t.Fatalf("Send after exit: %v, want ErrSessionExited", err)
	}
	if _, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrSessionExited) {
		t.Fatalf("StartSend after exit: %v, want ErrSessionExited", err)
	}
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGINT); !errors.Is(err, messages.ErrSessionExited) {
		t.Fatalf("Signal after exit: %v, want ErrSessionExited", err)
	}
	page, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{})
	if err != nil {
		t.Fatalf("Read after exit: %v", err)
	}
	if !strings.Contains(page.Text, "exit 3") {
		t.Fatalf("scrollback after exit: %q", page.Text)
	}
	list, err := h.svc.List(ctx, h.owner)
	if err != nil || len(list) != 1 || list[0].SessionID != id {
		t.Fatalf("List after exit: %+v %v", list, err)
	}
	if st := list[0].Status; !st.Exited || st.ExitCode == nil || *st.ExitCode != 3 {
		t.Fatalf("listed status %s, want exited code=3", st)
	}
	report, err := h.svc.Session(h.owner, id).Close(ctx, "")
	closed := !report.Joined
	if err != nil || !closed {
		t.Fatalf("Kill after exit: closed=%v err=%v", closed, err)
	}
	if len(report.Survivors) != 0 {
		t.Fatalf("survivors %v", report.Survivors)
	}
	if st := report.Status; !st.Exited || st.ExitCode == nil || *st.ExitCode != 3 {
		t.Fatalf("report status %s, want exited code=3", st)
	}
	h.waitListEmpty("after Kill")
	if _, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("Read after Kill: %v, want NO_SESSION", err)
	}
	if s := sessionMembers(t, sp.PID()); len(s) != 0 {
		t.Fatalf("processes of the exited shell's session remain:\n  %s", describe(s))
	}
}

// A process the shell left behind in its session when it exited (not a
// job: a subshell's background child, re-parented away) is still the
// session's, and closing the session stops it.
func TestKillAfterShellExitSweepsLeftovers(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	res := h.send(sp.ID(), "(sleep 300 &); exit 4")
	if res.WaitReason != messages.WaitSessionExit || res.Status.ExitCode == nil || *res.Status.ExitCode != 4 {
		t.Fatalf("exit: %+v", res)
	}
	// The subshell's child may still be a forked bash about to exec sleep.
	var left []linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the left-over child to become sleep", func() bool {
		left = left[:0]
		for _, p := range sessionMembers(t, sp.PID()) {
			if p.Comm == "sleep" {
				left = append(left, p)
			}
		}
		return len(left) == 1
	})
	report, err := sp.Close(testkit.Ctx(t), "")
	closed := !report.Joined
	if err != nil || !closed {
		t.Fatalf("Kill: closed=%v err=%v", closed, err)
	}
	if !slices.Contains(report.Killed, left[0].PID) || !gone(left[0].Identity()) {
		t.Fatalf("the left-over sleep %d: killed %v, gone %v", left[0].PID, report.Killed, gone(left[0].Identity()))
	}
}

// Item 13: an interactive REPL inside the shell.
func TestPythonREPL(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 1000
	h := newHarness(t, cfg, local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	ctx := testkit.Ctx(t)
	res := h.send(id, "python3 -q")
	if res.WaitReason == messages.WaitTimeout || res.WaitReason == messages.WaitSessionExit {
		t.Fatalf("python3 -q: wait reason %q; viewport %q", res.WaitReason, res.Viewport)
	}
	// However the start settled, send nothing before the REPL prompts.
	testkit.WaitFor(t, 10*time.Second, "the python prompt", func() bool {
		p, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{Count: intp(1)})
		return err == nil && p.Text == ">>> "
	})
	res = h.send(id, "print(6*7)")
	if res.WaitReason != messages.WaitStdinRead && res.WaitReason != messages.WaitInferredIdle {
		t.Fatalf("print(6*7): wait reason %q", res.WaitReason)
	}
	if !hasLine(res.Viewport, "42") {
		t.Fatalf("print(6*7): viewport %q has no line 42", res.Viewport)
	}
	if res.ExitCode != nil {
		t.Fatalf("a REPL answer carries shell exit code %d", *res.ExitCode)
	}
	res = h.prompt(id, "exit()", 0)
	if !strings.HasSuffix(res.Viewport, local.PromptText) {
		t.Fatalf("exit(): viewport %q does not end at the shell prompt", res.Viewport)
	}
}

// Item 14: signals go to the terminal's foreground group, never a guess.
func TestSignal(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	id := sp.ID()
	ctx := testkit.Ctx(t)

	op, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid := foregroundSleep(t, sp.PID())
	r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGINT)
	if err != nil {
		t.Fatalf("SIGINT: %v", err)
	}
	if !r.Delivered || r.TargetPgid != pgid || r.TargetPgid == sp.PID() {
		t.Fatalf("SIGINT result %+v, want delivered to pgid %d (shell %d)", r, pgid, sp.PID())
	}
	res, err := op.Result(ctx)
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("interrupted send: %+v %v, want stdin_read exit 130", res, err)
	}

	// SIGKILL is fine for a foreground job...
	op, err = h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid = foregroundSleep(t, sp.PID())
	if r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGKILL); err != nil || r.TargetPgid != pgid {
		t.Fatalf("SIGKILL to the job: %+v %v", r, err)
	}
	if res, err := op.Result(ctx); err != nil || res.ExitCode == nil || *res.ExitCode != 137 {
		t.Fatalf("killed send: %+v %v, want exit 137", res, err)
	}

	// ...but refused when the shell itself is the foreground group.
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGKILL); !errors.Is(err, messages.ErrRefuseKillShell) {
		t.Fatalf("SIGKILL to the shell: %v, want ErrRefuseKillShell", err)
	}
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.Signal("SIGFOO")); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("SIGFOO: %v, want ErrInvalidArgument", err)
	}
	if st := stat(t, sp.PID()); !st.Alive() {
		t.Fatalf("shell state %c after the refused SIGKILL", st.State)
	}
	h.prompt(id, "true", 0)
}
