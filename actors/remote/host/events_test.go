package host_test

import (
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A remote session publishes its lifecycle on the client's event stream as
// a local one does (svc.Subscribe sees it, with the owner and the send's
// facts), and Describe answers with the host's snapshot, secret prompt
// included.
func TestRemoteEventsAndDescribe(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	svc, o := newClient(t, h)
	ctx := testkit.Ctx(t)
	sub := svc.Subscribe(o)
	defer sub.Close()
	next := func() any {
		t.Helper()
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatal(err)
	}
	if ev, ok := next().(*protocol.EventSessionOpened); !ok || ev.Owner != o || ev.Snapshot.SessionID != sh.ID() {
		t.Fatalf("first event %#v, want the session opened", ev)
	}

	res, err := sh.Send(ctx, messages.SendRequest{Text: "echo hi; false", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := next().(*protocol.EventSendSettled)
	if !ok || ev.Owner != o || ev.Session != sh.ID() || ev.Ticket == 0 || ev.WaitReason != messages.WaitStdinRead ||
		ev.Cause != res.Cause || ev.ExitCode == nil || *ev.ExitCode != 1 || ev.Reader != res.Reader || ev.Cursor != res.Cursor || ev.Err != nil {
		t.Fatalf("settled event %#v for result %+v", ev, res)
	}

	// A password read (echo off): the send says so, the event too, and
	// Describe, asked of the host, as well.
	res, err = sh.Send(ctx, messages.SendRequest{Text: `read -s -p "Password: " pw`, Submit: true})
	if err != nil || !res.Secret {
		t.Fatalf("secret read: %+v %v", res, err)
	}
	if ev, ok := next().(*protocol.EventSendSettled); !ok || !ev.Secret || ev.Owner != o {
		t.Fatalf("settled event %#v, want Secret", ev)
	}
	snap, err := svc.Session(o, sh.ID()).Describe(ctx)
	if err != nil || !snap.SecretPrompt || snap.SessionID != sh.ID() || snap.PID != sh.PID() || snap.Status.Exited {
		t.Fatalf("describe at a secret prompt: %+v %v", snap, err)
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "x", Submit: true}); err != nil {
		t.Fatal(err)
	}
	next()
	if snap, err := svc.Session(o, sh.ID()).Describe(ctx); err != nil || snap.SecretPrompt {
		t.Fatalf("describe after the secret was typed: %+v %v", snap, err)
	}

	// The shell exits, then the session is closed: both are published.
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "exit 3", Submit: true}); err != nil {
		t.Fatal(err)
	}
	var exited *protocol.EventSessionExited
	for exited == nil {
		switch e := next().(type) {
		case *protocol.EventSessionExited:
			exited = e
		case *protocol.EventSendSettled:
		default:
			t.Fatalf("unexpected event %#v", e)
		}
	}
	if exited.Owner != o || exited.Session != sh.ID() || !exited.Status.Exited || exited.Status.ExitCode == nil || *exited.Status.ExitCode != 3 {
		t.Fatalf("exited event %#v", exited)
	}
	if snap, err := svc.Session(o, sh.ID()).Describe(ctx); err != nil || !snap.Status.Exited {
		t.Fatalf("describe after the exit: %+v %v", snap, err)
	}
	if _, err := sh.Close(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	for {
		e := next()
		if c, ok := e.(*protocol.EventSessionClosed); ok {
			if c.Owner != o || c.Session != sh.ID() || !strings.Contains(c.Reason, "test") {
				t.Fatalf("closed event %#v", c)
			}
			break
		}
		if _, ok := e.(*protocol.EventSendSettled); !ok {
			t.Fatalf("unexpected event %#v", e)
		}
	}
}
