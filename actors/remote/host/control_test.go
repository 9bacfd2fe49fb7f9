package host_test

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Take over and hand back, through a host: the host's session actor holds
// the control state, and the proxy forwards each request. A take-over
// settles the agent's long send with cause taken_over; the agent's send
// is refused (CONTROL_HELD, named by the client's id); the person's keys
// reach the terminal; the hand-back summarizes them, and the agent's next
// result carries it once; the stale hold's input is refused
// (CONTROL_STALE).
func TestControlThroughHost(t *testing.T) {
	if isolate(t) {
		return
	}
	_, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)

	sub := sh.Subscribe()
	defer sub.Close()
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	// The sleep runs on the host once the shell echoed it.
	testkit.WaitFor(t, 5*time.Second, "the sleep to run", func() bool {
		d, err := op.ReadOutput(ctx)
		return err == nil && d.Delta != "" || err != nil
	})
	c, err := sh.TakeControl(ctx, messages.TakeControlRequest{Interrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.State(); st.Holder != messages.OperatorHolder || !st.Person || st.Epoch == 0 || st.Since.IsZero() {
		t.Fatalf("control %+v", st)
	}
	// The SIGINT ended sleep: the send settled at the shell's prompt.
	res, err := op.Result(ctx)
	if err != nil || res.Cause != messages.CauseTakenOver || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("the long send: cause %q, exit %v, %v; want taken_over, 130", res.Cause, res.ExitCode, err)
	}
	snap, err := sh.Describe(ctx)
	if err != nil || snap.Control.Holder != messages.OperatorHolder || !snap.Control.Person || snap.Control.Epoch != c.Epoch() {
		t.Fatalf("describe: control %+v (%v)", snap.Control, err)
	}

	_, err = sh.Send(ctx, messages.SendRequest{Text: "echo agent", Submit: true})
	if !errors.Is(err, messages.ErrControlHeld) {
		t.Fatalf("the agent's send while a person holds the input: %v, want ErrControlHeld", err)
	}
	if !strings.Contains(err.Error(), string(sh.ID())) {
		t.Fatalf("the refusal names another session than the client's %s: %q", sh.ID(), err)
	}
	if err := sh.Resize(ctx, 30, 100); !errors.Is(err, messages.ErrControlHeld) {
		t.Fatalf("the agent's resize: %v, want ErrControlHeld", err)
	}
	if err := c.Resize(ctx, 30, 100); err != nil {
		t.Fatalf("the person's resize: %v", err)
	}

	if err := c.Type(ctx, []byte("echo remote-$((6*7))\r")); err != nil {
		t.Fatal(err)
	}
	// The screen shows the output, then the shell's prompt (its marker
	// signs the command's exit code).
	testkit.WaitFor(t, 10*time.Second, "remote-42, then the prompt", func() bool {
		sc, err := sh.Screen(ctx)
		if err != nil || sc.CursorRow >= len(sc.Rows) || strings.TrimSpace(sc.Rows[sc.CursorRow]) != "$" {
			return false
		}
		i := slices.IndexFunc(sc.Rows, func(r string) bool { return strings.TrimSpace(r) == "remote-42" })
		return i >= 0 && i < sc.CursorRow
	})

	hb, err := c.Return(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHandback(t, hb)
	// The client's subscribers heard both changes of hands, pushed by the
	// host, as a local session's: the take-over, then the hand-back.
	var changes []*protocol.EventControlChanged
	for len(changes) < 2 {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("events: %v (control changes so far: %d)", err, len(changes))
		}
		if e, ok := ev.(*protocol.EventControlChanged); ok {
			changes = append(changes, e)
		}
	}
	if e := changes[0]; e.Session != sh.ID() || e.Control.Epoch != c.Epoch() || !e.Control.Person || e.Handback != nil {
		t.Fatalf("the take-over's event: %+v", e)
	}
	if e := changes[1]; e.Session != sh.ID() || e.Control.Person || e.Control.Epoch <= c.Epoch() || e.Handback == nil {
		t.Fatalf("the hand-back's event: %+v", e)
	}
	checkHandback(t, *changes[1].Handback)

	res, err = sh.Send(ctx, messages.SendRequest{Text: "echo agent-again", Submit: true})
	if err != nil || !strings.Contains(res.Viewport, "agent-again") {
		t.Fatalf("the agent's send after the hand-back: %+v %v", res, err)
	}
	if res.Handback == nil {
		t.Fatal("the agent's next result carries no handback")
	}
	checkHandback(t, *res.Handback)
	if res, err := sh.Send(ctx, messages.SendRequest{Text: "true", Submit: true}); err != nil || res.Handback != nil {
		t.Fatalf("the handback came twice: %+v %v", res.Handback, err)
	}

	err = c.Type(ctx, []byte("echo stale\r"))
	if !errors.Is(err, messages.ErrControlStale) {
		t.Fatalf("input after the hand-back: %v, want ErrControlStale", err)
	}
	if _, err := c.Return(ctx); !errors.Is(err, messages.ErrControlStale) {
		t.Fatalf("a second hand-back: %v, want ErrControlStale", err)
	}
	if snap, err := sh.Describe(ctx); err != nil || snap.Control.Person {
		t.Fatalf("describe after the hand-back: control %+v (%v)", snap.Control, err)
	}

	// A read is the agent's next result too: a second hold's hand-back
	// comes with it.
	c2, err := sh.TakeControl(ctx, messages.TakeControlRequest{Person: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Type(ctx, []byte("true\r")); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Return(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := sh.Read(ctx, messages.ReadRequest{})
	if err != nil || page.Handback == nil || !slices.Equal(page.Handback.People, []string{"ada"}) ||
		len(page.Handback.Lines) != 1 || page.Handback.Lines[0].Text != "true" {
		t.Fatalf("the read after ada's hold: handback %+v, %v", page.Handback, err)
	}
	if _, err := sh.Close(ctx, "test"); err != nil {
		t.Fatal(err)
	}
}

// checkHandback checks the hand-back of the operator's hold: the line
// typed, and the exit codes of the interrupted sleep and of that line.
func checkHandback(t *testing.T, hb messages.Handback) {
	t.Helper()
	var typed []string
	for _, l := range hb.Lines {
		typed = append(typed, l.Text)
	}
	if len(hb.People) != 1 || hb.People[0] != messages.OperatorHolder || hb.Reason != messages.HandbackReturned {
		t.Fatalf("handback people %v reason %q", hb.People, hb.Reason)
	}
	if len(hb.Lines) != 1 || hb.Lines[0].Text != "echo remote-$((6*7))" || hb.Lines[0].Secret {
		t.Fatalf("handback lines %q, want the typed line", typed)
	}
	if !slices.Equal(hb.ExitCodes, []int{130, 0}) {
		t.Fatalf("handback exit codes %v, want [130 0]", hb.ExitCodes)
	}
	if hb.Since.IsZero() || hb.Until.Before(hb.Since) || hb.ToSeq <= hb.FromSeq || hb.ToCursor < hb.FromCursor {
		t.Fatalf("handback bounds: %v..%v seq %d..%d cursor %d..%d", hb.Since, hb.Until, hb.FromSeq, hb.ToSeq, hb.FromCursor, hb.ToCursor)
	}
}

// While a person holds a remote session's input, the model's close is
// refused (CONTROL_HELD) and the session goes on, as on one machine; the
// owner's dispose closes it all the same: the proxy hands the hold back
// on the host, then closes, and the shell is gone.
func TestControlCloseWhileHeld(t *testing.T) {
	if isolate(t) {
		return
	}
	_, svc, o, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	c, err := sh.TakeControl(ctx, messages.TakeControlRequest{Person: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Close(ctx, "agent closes"); !errors.Is(err, messages.ErrControlHeld) || !strings.Contains(err.Error(), "ada") {
		t.Fatalf("the model's close while ada holds the input: %v, want CONTROL_HELD naming her", err)
	}
	if err := c.Type(ctx, []byte("echo still-$((40+2))\r")); err != nil {
		t.Fatalf("the person's input after the refused close: %v", err)
	}
	testkit.WaitFor(t, 10*time.Second, "the screen to show still-42", func() bool {
		sc, err := sh.Screen(ctx)
		return err == nil && slices.ContainsFunc(sc.Rows, func(r string) bool { return strings.TrimSpace(r) == "still-42" })
	})
	if snap, err := sh.Describe(ctx); err != nil || snap.Control.Holder != "ada" {
		t.Fatalf("describe after the refused close: %+v %v", snap.Control, err)
	}

	if err := svc.DisposeOwner(ctx, o); err != nil {
		t.Fatalf("dispose while ada holds the input: %v", err)
	}
	testkit.WaitFor(t, 10*time.Second, "the held session's shell to exit", func() bool {
		return syscall.Kill(sh.PID(), 0) == syscall.ESRCH
	})
}

// While the host is lost, control requests fail with ErrHostLost at
// once, like every other request: the control state was the host's.
func TestControlHostLost(t *testing.T) {
	if isolate(t) {
		return
	}
	h, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	h.Kill(t)
	testkit.WaitFor(t, 10*time.Second, "the host to be lost", func() bool {
		snap, err := sh.Describe(ctx)
		return err == nil && snap.Status.Exited && snap.Status.Cause == messages.CauseHostLost
	})
	if _, err := sh.TakeControl(ctx, messages.TakeControlRequest{}); !errors.Is(err, messages.ErrHostLost) {
		t.Fatalf("take control of a lost host's session: %v, want ErrHostLost", err)
	}
	if _, err := sh.Close(ctx, "written off"); err != nil {
		t.Fatalf("close of a lost session: %v", err)
	}
}
