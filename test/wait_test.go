//go:build linux

package test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// A command that outlives its send (settled on silence) is waited for
// instead of polled: the wait returns at its prompt with the exit code,
// at a program's input wait, at a pattern, at the shell's exit, or at its
// own deadline, and says which.
func TestWaitUntilConditions(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	// Every command blocks on the gate, so it is still running when its
	// send settles on silence, and goes on when the test releases it.
	g := newGate(t)
	quick := messages.WaitPolicy{Silence: 100 * time.Millisecond}
	start := func(text string) {
		t.Helper()
		res, err := sh.Send(ctx, messages.SendRequest{Text: text, Submit: true, Wait: quick})
		if err != nil || res.Cause != messages.CauseSilence {
			t.Fatalf("%q: %+v %v, want it left running (silence)", text, res, err)
		}
	}
	wait := func(p messages.WaitPolicy, want messages.Cause) messages.SendResult {
		t.Helper()
		res, err := sh.Wait(ctx, p)
		if err != nil || res.Cause != want {
			t.Fatalf("wait %+v: %+v %v, want cause %s", p, res, err, want)
		}
		return res
	}
	// waitReleasing begins a wait and then releases the gate: what the
	// command does next happens while the wait runs.
	waitReleasing := func(p messages.WaitPolicy, want messages.Cause) messages.SendResult {
		t.Helper()
		op, err := sh.StartSend(ctx, messages.SendRequest{Wait: p})
		if err != nil {
			t.Fatalf("wait %+v: %v", p, err)
		}
		g.release()
		res, err := op.Result(ctx)
		if err != nil || res.Cause != want {
			t.Fatalf("wait %+v: %+v %v, want cause %s", p, res, err, want)
		}
		return res
	}
	until := messages.WaitPolicy{NoSilence: true}

	// The prompt, with the build's exit code and its output since the wait.
	start("echo compiling; " + g.wait() + "; echo built; (exit 3)")
	res := waitReleasing(until, messages.CausePrompt)
	if res.ExitCode == nil || *res.ExitCode != 3 || !hasLine(res.Viewport, "built") {
		t.Fatalf("prompt: %+v", res)
	}

	// A prompt that returned before the wait began is not lost.
	start(g.wait() + "; (exit 5)")
	g.release()
	testkit.WaitFor(t, 10*time.Second, "the prompt after the gate", func() bool {
		p, err := sh.Read(ctx, messages.ReadRequest{})
		return err == nil && strings.HasSuffix(p.Text, "\n"+local.PromptText)
	})
	res = wait(until, messages.CausePrompt)
	if res.ExitCode == nil || *res.ExitCode != 5 {
		t.Fatalf("earlier prompt: %+v", res)
	}

	// A program that asks for input once the gate opens.
	start(`python3 -c 'print("thinking"); open("` + g.path + `").readline(); print(input("continue? "))'`)
	res = waitReleasing(until, messages.CauseInput)
	if res.Reader != "python3" || !strings.Contains(res.Viewport, "continue? ") {
		t.Fatalf("input: %+v", res)
	}
	h.prompt(sh.ID(), "y", 0)

	// A pattern in new output: ticks 4 to 6 come after the gate opens, and
	// the command then blocks again, so no prompt competes with the match.
	start("for i in 1 2 3 4 5 6; do echo tick $i; case $i in 3|6) " + g.wait() + ";; esac; done")
	res = waitReleasing(messages.WaitPolicy{NoSilence: true, Pattern: `tick [4-6]`}, messages.CausePattern)
	if res.WaitReason != messages.WaitInferredIdle || !strings.Contains(res.Viewport, "tick 4") {
		t.Fatalf("pattern: %+v", res)
	}
	waitReleasing(until, messages.CausePrompt)

	// Its own deadline, while the command still runs.
	start("echo long; " + g.wait())
	wait(messages.WaitPolicy{NoSilence: true, Timeout: 200 * time.Millisecond}, messages.CauseDeadline)
	waitReleasing(until, messages.CausePrompt)

	// A bad pattern is refused before anything waits.
	if _, err := sh.Wait(ctx, messages.WaitPolicy{Pattern: "("}); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("bad pattern: %v", err)
	}

	// The shell's exit.
	start(g.wait() + "; exit 4")
	res = waitReleasing(until, messages.CauseExit)
	if res.Status.ExitCode == nil || *res.Status.ExitCode != 4 {
		t.Fatalf("exit: %+v", res)
	}
}

// The workflow terminal_wait exists for, over the tools an agent calls: a
// build that outlives its send and ends in a y/n prompt takes three calls
// (send, wait, answer) instead of a poll loop.
func TestToolWaitBuildThenPrompt(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	ts, err := tools.New(h.svc, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := h.spawn(messages.SpawnRequest{}).ID()
	g := newGate(t)
	calls := 0
	call := func(name string, args map[string]any) tools.ForegroundSendValue {
		t.Helper()
		calls++
		args["sessionId"] = id
		raw, _ := json.Marshal(args)
		r := ts.Call(testkit.Ctx(t), h.owner, name, raw)
		v, ok := r.Structured.(tools.ForegroundSendValue)
		if r.IsError || !ok {
			t.Fatalf("%s %v: %+v", name, args, r)
		}
		return v
	}
	// Only the build's send asks for a short silence; the answer's keeps
	// the configuration's long one and ends at the prompt.
	v := call(tools.TerminalSend, map[string]any{"text": "echo building; " + g.wait() + "; read -r -p 'deploy? [y/n] ' a; echo answered $a", "silenceMs": 500})
	if v.Cause != string(messages.CauseSilence) {
		t.Fatalf("send: %+v, want it to return while the build runs", v)
	}
	// The build ends. Its y/n prompt is a state, not an event: the wait
	// finds the shell reading the terminal whether it began before the
	// prompt was printed or after.
	g.release()
	v = call(tools.TerminalWait, map[string]any{"timeoutMs": 20000})
	if v.Cause != string(messages.CauseInput) || !strings.Contains(v.Viewport, "deploy? [y/n] ") {
		t.Fatalf("wait: %+v, want the y/n prompt", v)
	}
	v = call(tools.TerminalSend, map[string]any{"text": "y"})
	if v.Cause != string(messages.CausePrompt) || v.ExitCode == nil || *v.ExitCode != 0 || !strings.Contains(v.Viewport, "answered y") {
		t.Fatalf("answer: %+v", v)
	}
	if calls != 3 {
		t.Fatalf("%d calls", calls)
	}
}

// A wait's result holds the output since the previous result ended,
// printed before the wait began included, and not what that result
// showed again; an explicit cursor reads from there.
func TestWaitShowsOutputSinceTheCursor(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	g := newGate(t)
	first, err := sh.Send(ctx, messages.SendRequest{Text: "echo one; " + g.wait() + "; echo between-output; " + g.wait() + "; echo two", Submit: true,
		Wait: messages.WaitPolicy{Silence: 100 * time.Millisecond}})
	if err != nil || first.Cause != messages.CauseSilence {
		t.Fatalf("send: %+v %v", first, err)
	}
	// Output printed between the send's result and the wait.
	g.release()
	testkit.WaitFor(t, 10*time.Second, "the output between", func() bool {
		p, err := sh.Read(ctx, messages.ReadRequest{})
		return err == nil && strings.Contains(p.Text, "between-output\n")
	})
	op, err := sh.StartSend(ctx, messages.SendRequest{Wait: messages.WaitPolicy{NoSilence: true}})
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	// Output printed during the wait.
	g.release()
	res, err := op.Result(ctx)
	if err != nil || res.Cause != messages.CausePrompt || !hasLine(res.Viewport, "between-output") || !hasLine(res.Viewport, "two") ||
		hasLine(res.Viewport, "one") || strings.Contains(res.Viewport, "echo one") {
		t.Fatalf("wait: %+v %v", res, err)
	}
	from := first.Cursor
	res, err = sh.Wait(ctx, messages.WaitPolicy{NoSilence: true, Since: &from})
	if err != nil || !hasLine(res.Viewport, "between-output") {
		t.Fatalf("wait from a cursor: %+v %v", res, err)
	}
}

// A pattern matches the line the cursor is still on: a prompt printed
// without a newline.
func TestWaitPatternOnTheCursorLine(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	g := newGate(t)
	res, err := sh.Send(ctx, messages.SendRequest{Text: g.wait() + "; printf 'Continue? '; " + g.wait(), Submit: true,
		Wait: messages.WaitPolicy{Silence: 100 * time.Millisecond}})
	if err != nil || res.Cause != messages.CauseSilence {
		t.Fatalf("send: %+v %v, want it left running (silence)", res, err)
	}
	// The question is printed while the wait runs: new output.
	op, err := sh.StartSend(ctx, messages.SendRequest{Wait: messages.WaitPolicy{NoSilence: true, Pattern: `Continue\? $`}})
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	g.release()
	res, err = op.Result(ctx)
	if err != nil || res.Cause != messages.CausePattern {
		t.Fatalf("wait: %+v %v", res, err)
	}
	g.release()
	if res, err := sh.Wait(ctx, messages.WaitPolicy{NoSilence: true}); err != nil || res.Cause != messages.CausePrompt {
		t.Fatalf("the command's end: %+v %v", res, err)
	}
}
