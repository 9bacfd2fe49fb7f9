package test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Item 8: another owner cannot touch a session, and cannot even learn that
// it exists: its refusals read exactly like those for an unknown id.
func TestOwnerIsolation(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{Name: "mine"})
	ctx := testkit.Ctx(t)
	b, err := h.svc.NewOwner(ctx, "intruder")
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		call func(messages.SessionID) error
	}{
		{"StartSend", func(id messages.SessionID) error {
			_, err := h.svc.Session(b, id).StartSend(ctx, messages.SendRequest{Text: "echo PWNED-$((1+1))", Submit: true})
			return err
		}},
		{"Send", func(id messages.SessionID) error {
			_, err := h.svc.Session(b, id).Send(ctx, messages.SendRequest{Text: "echo PWNED-$((1+1))", Submit: true})
			return err
		}},
		{"Read", func(id messages.SessionID) error {
			_, err := h.svc.Session(b, id).Read(ctx, messages.ReadRequest{})
			return err
		}},
		{"Signal", func(id messages.SessionID) error {
			_, err := h.svc.Session(b, id).Signal(ctx, messages.SIGINT)
			return err
		}},
		{"Kill", func(id messages.SessionID) error {
			_, err := h.svc.Session(b, id).Close(ctx, "")
			return err
		}},
	}
	unknown := messages.SessionID("pty-" + randHex(16))
	// norm hides the id itself, the only thing that may differ.
	norm := func(err error, id messages.SessionID) string {
		return fmt.Sprintf("%T %s", err, strings.ReplaceAll(err.Error(), string(id), "<id>"))
	}
	foreignText := map[string]string{}
	for _, c := range calls {
		errForeign, errUnknown := c.call(sp.ID()), c.call(unknown)
		if !errors.Is(errForeign, messages.ErrNoSession) || !errors.Is(errUnknown, messages.ErrNoSession) {
			t.Fatalf("%s: foreign %v, unknown %v; want NO_SESSION for both", c.name, errForeign, errUnknown)
		}
		if nf, nu := norm(errForeign, sp.ID()), norm(errUnknown, unknown); nf != nu {
			t.Fatalf("%s: an existence oracle: foreign id %q, unknown id %q", c.name, nf, nu)
		}
		foreignText[c.name] = errForeign.Error()
	}
	if l, err := h.svc.List(ctx, b); err != nil || len(l) != 0 {
		t.Fatalf("intruder's List: %+v %v", l, err)
	}
	if active, err := h.svc.HasOwnerActivity(ctx, b); err != nil || active {
		t.Fatalf("intruder's activity: %v %v", active, err)
	}
	// The owner's session was not touched: still listed, still usable, and
	// the intruder's input was never written.
	if l, err := h.svc.List(ctx, h.owner); err != nil || len(l) != 1 || l[0].SessionID != sp.ID() || l[0].Name != "mine" {
		t.Fatalf("owner's List: %+v %v", l, err)
	}
	page, err := sp.Read(ctx, messages.ReadRequest{})
	if err != nil || strings.Contains(page.Text, "PWNED") {
		t.Fatalf("owner's scrollback %q %v: the intruder's input reached the terminal", page.Text, err)
	}
	h.prompt(sp.ID(), "true", 0)
	// Once the session is really gone, the intruder gets the very same text.
	if rep, err := sp.Close(ctx, ""); err != nil || rep.Joined {
		t.Fatalf("owner's Close: %+v %v", rep, err)
	}
	for _, c := range calls {
		if err := c.call(sp.ID()); err == nil || err.Error() != foreignText[c.name] {
			t.Fatalf("%s: after close %v, while alive %q", c.name, err, foreignText[c.name])
		}
	}
}

// Item 9: Spawn checks run in the documented order with the real backend.
func TestSpawnCheckOrder(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	ctx := testkit.Ctx(t)
	stranger := messages.NewOwner("never opened")
	cause := errors.New("caller aborted before spawning")
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(cause)

	// Caller aborted comes before owner-not-live and no-backend.
	if _, err := h.svc.Spawn(cancelled, stranger, messages.SpawnRequest{Type: "nope"}); err != cause {
		t.Fatalf("aborted: %v, want exactly the caller's cause", err)
	}
	if _, err := h.svc.Spawn(cancelled, h.owner, messages.SpawnRequest{}); err != cause {
		t.Fatalf("aborted with a live owner: %v, want exactly the caller's cause", err)
	}
	// Owner-not-live comes before no-backend.
	if _, err := h.svc.Spawn(ctx, stranger, messages.SpawnRequest{Type: "nope"}); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("unknown owner: %v, want OWNER_NOT_LIVE", err)
	}
	// No-backend comes before the name checks.
	if _, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{Type: "nope", Name: " "}); !errors.Is(err, messages.ErrNoBackend) {
		t.Fatalf("unknown type: %v, want NO_BACKEND", err)
	}
	if _, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{Type: "shell", Name: " "}); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("blank name: %v, want ErrInvalidArgument", err)
	}
	first := h.spawn(messages.SpawnRequest{Type: "shell", Name: "dup"})
	if _, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{Name: "dup"}); !errors.Is(err, messages.ErrDuplicateName) {
		t.Fatalf("duplicate name: %v, want DUPLICATE_NAME", err)
	}
	// Nothing was started by the refused spawns: one shell, one session.
	if l, err := h.svc.List(ctx, h.owner); err != nil || len(l) != 1 || l[0].SessionID != first.ID() {
		t.Fatalf("List: %+v %v", l, err)
	}
	if ps := tagged(t, h.tag); len(ps) != 1 || ps[0].PID != first.PID() {
		t.Fatalf("processes started, want only the one shell %d:\n  %s", first.PID(), describe(ps))
	}
}

// Kill returns once the session is closed and its record removed: List no
// longer shows it and its name is free at once.
func TestKillReleasesRecordBeforeReturning(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	ctx := testkit.Ctx(t)
	for i := 0; i < 60; i++ {
		sp := h.spawn(messages.SpawnRequest{Name: "reused"})
		rep, err := sp.Close(ctx, "")
		closed := !rep.Joined
		if err != nil || !closed {
			t.Fatalf("round %d: Kill %v %v", i, closed, err)
		}
		if l, err := h.svc.List(ctx, h.owner); err != nil || len(l) != 0 {
			t.Fatalf("round %d: List right after Kill returned: %+v %v", i, l, err)
		}
		if active, err := h.svc.HasOwnerActivity(ctx, h.owner); err != nil || active {
			t.Fatalf("round %d: owner activity right after Kill returned: %v %v", i, active, err)
		}
	}
}

// Item 16: disposing an owner closes every busy session and returns only
// once their processes are gone (five sessions, each running a job).
func TestDisposeOwnerWithBusySessions(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	ctx := testkit.Ctx(t)
	type busy struct {
		sp    *actors.Session
		op    *actors.SendOp
		procs []linux.Identity
	}
	var all []*busy
	for i := 0; i < 5; i++ {
		sp := h.spawn(messages.SpawnRequest{Name: fmt.Sprintf("busy-%d", i)})
		op, err := sp.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, &busy{sp: sp, op: op})
	}
	for _, b := range all {
		foregroundSleep(t, b.sp.PID())
		for _, p := range sessionMembers(t, b.sp.PID()) {
			b.procs = append(b.procs, p.Identity())
		}
		if len(b.procs) < 2 {
			t.Fatalf("session %d: members %v, want the shell and its sleep", b.sp.PID(), b.procs)
		}
	}
	if active, err := h.svc.HasOwnerActivity(ctx, h.owner); err != nil || !active {
		t.Fatalf("activity before dispose: %v %v", active, err)
	}
	if err := h.svc.DisposeOwner(ctx, h.owner); err != nil {
		t.Fatalf("DisposeOwner: %v", err)
	}
	for _, b := range all {
		for _, id := range b.procs {
			if !gone(id) {
				t.Errorf("pid %d of session %d is alive after DisposeOwner returned", id.PID, b.sp.PID())
			}
		}
		if s := sessionMembers(t, b.sp.PID()); len(s) != 0 {
			t.Errorf("session %d still has members:\n  %s", b.sp.PID(), describe(s))
		}
	}
	if active, err := h.svc.HasOwnerActivity(ctx, h.owner); err != nil || active {
		t.Fatalf("activity after dispose: %v %v", active, err)
	}
	for _, b := range all {
		res, err := b.op.Result(ctx)
		if err != nil || res.WaitReason != messages.WaitSessionExit {
			t.Errorf("busy send of %d: %+v %v, want session_exit", b.sp.PID(), res, err)
		}
	}
	if l, err := h.svc.List(ctx, h.owner); err != nil || len(l) != 0 {
		t.Fatalf("List after dispose: %+v %v", l, err)
	}
	if _, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{}); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("Spawn after dispose: %v, want OWNER_NOT_LIVE", err)
	}
	h.checkNoTagged("after DisposeOwner")
}
