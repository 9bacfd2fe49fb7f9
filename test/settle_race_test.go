package test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A request about a send that arrives while the send settles must still be
// answered: AwaitSend (message protocol) right after StartSend of a command
// that settles at once.
func TestAwaitSendRacingSettlementIsAnswered(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	sys, pid := h.svc.System(), h.svc.PID()
	for i := 0; i < 400; i++ {
		r, err := sys.Root.RequestFuture(pid, &protocol.StartSend{Owner: h.owner, Session: id, Request: messages.SendRequest{Text: "true", Submit: true}}, 10*time.Second).Result()
		if err != nil {
			t.Fatalf("round %d: StartSend: %v", i, err)
		}
		ss := r.(*protocol.StartSendReply)
		if ss.Err != nil {
			t.Fatalf("round %d: StartSend: %v", i, ss.Err)
		}
		r, err = sys.Root.RequestFuture(pid, &protocol.AwaitSend{Owner: h.owner, Session: id, Ticket: ss.Ticket}, 5*time.Second).Result()
		if err != nil {
			t.Fatalf("round %d: AwaitSend of ticket %d got no answer: %v", i, ss.Ticket, err)
		}
		if st := r.(*protocol.SendSettled); st.Err != nil || st.Result.WaitReason != messages.WaitStdinRead {
			t.Fatalf("round %d: AwaitSend: %+v", i, st)
		}
	}
}

// SendOp.Cancel racing the settlement returns (true or false) instead of
// hanging: Send calls it when its context ends, so a hang here hangs Send.
func TestCancelRacingSettlementReturns(t *testing.T) {
	// A SIGINT that lands after the command finished may leave the
	// cancelled send nothing but silence to settle on: keep that short.
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 300
	h := newHarness(t, cfg, local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	ctx := testkit.Ctx(t)
	for i := 0; i < 400; i++ {
		// A cancelled send keeps the slot until its interrupt drained;
		// StartSend waits for that rather than answering SEND_ACTIVE.
		sop, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "true", Submit: true})
		if err != nil {
			t.Fatalf("round %d: StartSend: %v", i, err)
		}
		done := make(chan struct{})
		go func() { sop.Cancel(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: Cancel did not return", i)
		}
		if _, err := sop.Result(ctx); err != nil && !errors.Is(err, messages.ErrAbortedBeforeWrite) {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// A cancel whose SIGINT reaches the shell before the command's job took
// the terminal still stops the job. The shell here catches SIGINT in a
// trap while it waits for a background child, so the interrupt does not
// abort the list and `sleep 100` starts after it: the runtime must see the
// new foreground group and interrupt it as well.
func TestCancelReachingTheShellStillStopsTheJob(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 60000 // only the prompt after the job may settle
	cfg.TimeoutMs = 60000
	h := newHarness(t, cfg, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	h.send(sp.ID(), "trap 'echo trapped' INT")
	ctx := testkit.Ctx(t)
	sop, err := sp.StartSend(ctx, messages.SendRequest{Text: "(sleep 1) & wait; sleep 100; echo after-sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	var background int
	testkit.WaitFor(t, 10*time.Second, "the background sleep", func() bool {
		for _, p := range sessionMembers(t, sp.PID()) {
			if p.Comm == "sleep" && p.PGRP != sp.PID() {
				background = p.PID
				return true
			}
		}
		return false
	})
	if !sop.Cancel() {
		t.Fatal("cancel refused")
	}
	res, err := sop.Result(ctx)
	if err != nil || res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "trapped") {
		t.Fatalf("cancelled send: %+v, %v", res, err)
	}
	for _, p := range sessionMembers(t, sp.PID()) {
		if p.Comm == "sleep" && p.PID != background {
			t.Fatalf("the cancelled command's sleep 100 survived: %+v; viewport %q", p, res.Viewport)
		}
	}
}
