//go:build linux

package test

import (
	"context"
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Every result says which condition ended it: the prompt, a program's
// input wait, silence, the deadline, the caller's cancel, a close, the
// shell's exit.
func TestCauses(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs, cfg.TimeoutMs = 300, 1500
	h := newHarness(t, cfg, local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	id := sh.ID()
	check := func(what string, res messages.SendResult, want messages.Cause) {
		t.Helper()
		if res.Cause != want {
			t.Fatalf("%s: cause %q (wait %s), want %q; viewport %q", what, res.Cause, res.WaitReason, want, res.Viewport)
		}
	}
	check("prompt", h.send(id, "true"), messages.CausePrompt)
	// Python's start may be slower than this test's short silence.
	res, err := sh.Send(testkit.Ctx(t), messages.SendRequest{Text: "python3 -q", Submit: true, Wait: messages.WaitPolicy{NoSilence: true}})
	if err != nil {
		t.Fatal(err)
	}
	check("input", res, messages.CauseInput)
	check("input again", h.send(id, "exit()"), messages.CausePrompt)
	// Output, then quiet: silence settles it; the sleep still runs.
	check("silence", h.send(id, "echo started; sleep 1"), messages.CauseSilence)
	// A deadline shorter than the silence threshold.
	dcfg := testkit.PTYConfig()
	dcfg.IdleSilenceMs, dcfg.TimeoutMs = 5000, 500
	hd := newHarness(t, dcfg, local.Options{})
	check("deadline", hd.send(hd.spawn(messages.SpawnRequest{}).ID(), "sleep 3"), messages.CauseDeadline)

	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	gaveUp := errors.New("agent gave up")
	op, err := h.svc.StartSend(testkit.Ctx(t), h.owner, id, messages.SendRequest{Text: "sleep 30", Submit: true})
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

	op, err = h.svc.StartSend(testkit.Ctx(t), h.owner, id, messages.SendRequest{Text: "sleep 30", Submit: true})
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
