//go:build linux

package test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Every result says which condition ended it: the prompt, a program's
// input wait, silence, the deadline, the caller's cancel, a close, the
// shell's exit.
func TestCauses(t *testing.T) {
	// PTYConfig's silence and deadline are long: only the steps about
	// them set short ones, so no other step depends on how fast a program
	// starts or ends.
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	id := sh.ID()
	check := func(what string, res messages.SendResult, want messages.Cause) {
		t.Helper()
		if res.Cause != want {
			t.Fatalf("%s: cause %q (wait %s), want %q; viewport %q", what, res.Cause, res.WaitReason, want, res.Viewport)
		}
	}
	check("prompt", h.send(id, "true"), messages.CausePrompt)
	// Python's start may be slower than any silence.
	res, err := sh.Send(testkit.Ctx(t), messages.SendRequest{Text: "python3 -q", Submit: true, Wait: messages.WaitPolicy{NoSilence: true}})
	if err != nil {
		t.Fatal(err)
	}
	check("input", res, messages.CauseInput)
	check("input again", h.send(id, "exit()"), messages.CausePrompt)
	// Output, then quiet: silence settles it; the command still runs,
	// blocked on the gate.
	g := newGate(t)
	res, err = sh.Send(testkit.Ctx(t), messages.SendRequest{Text: "echo started; " + g.wait(), Submit: true,
		Wait: messages.WaitPolicy{Silence: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	check("silence", res, messages.CauseSilence)
	// It ends at its prompt before anything else runs in this shell.
	g.release()
	res, err = sh.Wait(testkit.Ctx(t), messages.WaitPolicy{NoSilence: true})
	if err != nil {
		t.Fatal(err)
	}
	check("the silenced command's end", res, messages.CausePrompt)
	// A deadline shorter than the silence threshold: the command blocks on
	// a gate that is never released; it dies with its session (the gate,
	// made first, is closed after the runtime shut down).
	hold := newGate(t)
	dcfg := testkit.PTYConfig()
	dcfg.IdleSilenceMs, dcfg.TimeoutMs = 5000, 500
	hd := newHarness(t, dcfg, local.Options{})
	check("deadline", hd.send(hd.spawn(messages.SpawnRequest{}).ID(), hold.wait()), messages.CauseDeadline)

	// Only the caller's cancel, then the close, may end the sleeps.
	held := messages.WaitPolicy{NoSilence: true}
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	gaveUp := errors.New("agent gave up")
	op, err := h.svc.Session(h.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep 30", Submit: true, Wait: held})
	if err != nil {
		t.Fatal(err)
	}
	foregroundSleep(t, sh.PID())
	cancel(gaveUp)
	op.Cancel()
	res, err = op.Result(ctx)
	if err != nil && !errors.Is(err, gaveUp) {
		t.Fatal(err)
	}
	res, _ = op.Result(testkit.Ctx(t))
	check("cancelled", res, messages.CauseCancelled)

	op, err = h.svc.Session(h.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep 30", Submit: true, Wait: held})
	if err != nil {
		t.Fatal(err)
	}
	foregroundSleep(t, sh.PID())
	if _, err := sh.Close(testkit.Ctx(t), "test"); err != nil {
		t.Fatal(err)
	}
	res, _ = op.Result(testkit.Ctx(t))
	check("closed", res, messages.CauseClosed)

	id = h.spawn(messages.SpawnRequest{}).ID()
	res = h.send(id, "exit 3")
	check("exit", res, messages.CauseExit)
	if res.Status.ExitCode == nil || *res.Status.ExitCode != 3 {
		t.Fatalf("exit status %s", res.Status)
	}
}
