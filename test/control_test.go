package test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// startLong starts `sleep 30` as the agent's send and waits until sleep
// holds the terminal.
func startLong(t *testing.T, sp *actors.Session) *actors.SendOp {
	t.Helper()
	op, err := sp.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "sleep in the foreground", func() bool {
		sn, err := sp.Describe(testkit.Ctx(t))
		return err == nil && sn.Activity != nil && sn.Activity.Program == "sleep"
	})
	return op
}

// A person's take-over settles the agent's send in flight at once, with
// cause taken_over: without SIGINT the command runs on and the wait
// reason does not claim readiness; with it, the command is interrupted
// and the shell's prompt is what the result shows.
func TestTakeControlSettlesTheSendInFlight(t *testing.T) {
	for _, interrupt := range []bool{false, true} {
		name := "keeps running"
		if interrupt {
			name = "SIGINT"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testkit.PTYConfig(), local.Options{})
			sp := h.spawn(messages.SpawnRequest{})
			op := startLong(t, sp)
			c, err := sp.TakeControl(testkit.Ctx(t), messages.TakeControlRequest{Interrupt: interrupt})
			if err != nil {
				t.Fatal(err)
			}
			res, err := op.Result(testkit.Ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.Cause != messages.CauseTakenOver {
				t.Fatalf("cause %q, want taken_over; %+v", res.Cause, res)
			}
			sn, err := sp.Describe(testkit.Ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if !sn.Control.Person || sn.Control.Holder != messages.OperatorHolder || sn.Control.Epoch != c.Epoch() {
				t.Fatalf("control %+v, want the operator's hold of epoch %d", sn.Control, c.Epoch())
			}
			if !interrupt {
				if res.WaitReason == messages.WaitStdinRead {
					t.Fatalf("a running sleep reported as waiting for input: %+v", res)
				}
				if sn.Activity == nil || sn.Activity.Program != "sleep" {
					t.Fatalf("sleep no longer runs: %+v", sn.Activity)
				}
				return
			}
			// The SIGINT ended sleep: the shell's prompt, proven.
			if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
				t.Fatalf("after SIGINT: %s, exit %s; want stdin_read with 130", res.WaitReason, codeString(res.ExitCode))
			}
		})
	}
}

// While a person holds the input, the agent's writes, resizes, signals
// and close are refused with CONTROL_HELD naming who and since when;
// reads, screens and waits work, and a wait ends on the person's action.
func TestControlHeldRefusesTheAgent(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	c, err := sp.TakeControl(testkit.Ctx(t), messages.TakeControlRequest{Person: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Ctx(t)
	held := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, messages.ErrControlHeld) || !strings.Contains(err.Error(), "alice") {
			t.Fatalf("%s while alice holds control: %v, want CONTROL_HELD naming her", what, err)
		}
	}
	_, err = sp.Send(ctx, messages.SendRequest{Text: "echo agent", Submit: true})
	held("send", err)
	_, err = sp.Send(ctx, messages.SendRequest{Keys: []string{"C-c"}})
	held("keys", err)
	held("resize", sp.Resize(ctx, 30, 100))
	_, err = sp.Signal(ctx, messages.SIGINT)
	held("signal", err)
	_, err = sp.Close(ctx, "agent closes")
	held("close", err)
	if _, err := sp.Screen(ctx); err != nil {
		t.Fatalf("screen while held: %v", err)
	}
	if _, err := sp.Read(ctx, messages.ReadRequest{}); err != nil {
		t.Fatalf("read while held: %v", err)
	}
	// A wait works, and the person's command ends it: it returns when
	// the prompt is back after their command.
	if err := c.Type(ctx, []byte("sleep 1; echo typed-$((6*7))\r")); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "the person's sleep in the foreground", func() bool {
		sn, err := sp.Describe(ctx)
		return err == nil && sn.Activity != nil && sn.Activity.Program == "sleep"
	})
	res, err := sp.Wait(ctx, messages.WaitPolicy{})
	if err != nil || !strings.Contains(res.Viewport, "typed-42") {
		t.Fatalf("wait: %v, %+v", err, res)
	}
	// The person resizes.
	if err := c.Resize(ctx, 30, 100); err != nil {
		t.Fatalf("the holder's resize: %v", err)
	}
	if _, err := c.Return(ctx); err != nil {
		t.Fatal(err)
	}
	h.prompt(sp.ID(), "echo agent-again", 0)
}

// Hand back: the agent's next result, whatever it is, carries what the
// person did: the lines they submitted (a secret only as its length), the
// exit codes, and a line left half typed, which is discarded before the
// agent's next send writes, so its command runs as written.
func TestHandBackSummary(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	c, err := sp.TakeControl(ctx, messages.TakeControlRequest{})
	if err != nil {
		t.Fatal(err)
	}
	screenShows := func(what string) {
		t.Helper()
		testkit.WaitFor(t, 10*time.Second, what, func() bool {
			sc, err := sp.Screen(ctx)
			return err == nil && slices.ContainsFunc(sc.Rows, func(r string) bool { return strings.Contains(r, what) })
		})
	}
	// A person types each line at its prompt (a line typed ahead of its
	// prompt leaves no verified marker, so its exit code is not known).
	for _, line := range []string{"echo one-$((0+1))", "false"} {
		if err := c.Type(ctx, []byte(line+"\r")); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, 10*time.Second, "the prompt after "+line, func() bool {
			sc, err := sp.Screen(ctx)
			if err != nil || strings.TrimSpace(sc.Rows[sc.CursorRow]) != "$" {
				return false
			}
			i := slices.IndexFunc(sc.Rows, func(r string) bool { return strings.TrimRight(r, " ") == "$ "+line })
			return i >= 0 && i < sc.CursorRow
		})
	}
	if err := c.Type(ctx, []byte("read -s -p 'pw: ' pw; echo got-${#pw}\r")); err != nil {
		t.Fatal(err)
	}
	screenShows("pw: ")
	// The terminal reads with echo off now: what follows is a secret.
	testkit.WaitFor(t, 10*time.Second, "the secret prompt", func() bool {
		sn, err := sp.Describe(ctx)
		return err == nil && sn.Activity != nil && sn.Activity.Badge == messages.BadgeSecret
	})
	if err := c.Type(ctx, []byte("hunter2\r")); err != nil {
		t.Fatal(err)
	}
	screenShows("got-7")
	if err := c.Type(ctx, []byte("ech\x7fho half typed")); err != nil {
		t.Fatal(err)
	}
	screenShows("echo half typed")
	hb, err := c.Return(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []messages.TypedLine{
		{Text: "echo one-$((0+1))", Len: 17}, {Text: "false", Len: 5},
		{Text: "read -s -p 'pw: ' pw; echo got-${#pw}", Len: 37}, {Secret: true, Len: 7},
	}
	if !slices.Equal(hb.Lines, want) {
		t.Fatalf("lines %+v, want %+v", hb.Lines, want)
	}
	if !slices.Equal(hb.ExitCodes, []int{0, 1, 0}) || hb.HalfTyped != "echo half typed" || hb.Reason != messages.HandbackReturned ||
		!slices.Equal(hb.People, []string{messages.OperatorHolder}) || hb.ToSeq <= hb.FromSeq || hb.ToCursor < hb.FromCursor {
		t.Fatalf("hand-back %+v", hb)
	}
	if _, err := sp.Send(ctx, messages.SendRequest{Text: "x", Submit: true}); errors.Is(err, messages.ErrControlHeld) {
		t.Fatal("the agent is still refused after the hand-back")
	}
	// That send ("x": not found) carried the summary; the half-typed line
	// went before it.
	res := h.prompt(sp.ID(), "echo after-$((6*7))", 0)
	if res.Handback != nil {
		t.Fatalf("a second result carries the hand-back: %+v", res.Handback)
	}
	if !hasLine(res.Viewport, "after-42") {
		t.Fatalf("viewport %q", res.Viewport)
	}
	if got, err := sp.Read(ctx, messages.ReadRequest{}); err != nil || got.Handback != nil || strings.Contains(got.Text, "hunter2") {
		t.Fatalf("read after: %v, handback %+v", err, got.Handback)
	}
}

// The agent's first result after the hand-back carries the summary, and
// the half-typed line is discarded before its line is written.
func TestHandBackFirstResultAndHalfTypedLine(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	c, err := sp.TakeControl(ctx, messages.TakeControlRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Type(ctx, []byte("rm -rf /tmp/nothing-here")); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "the half-typed line", func() bool {
		sc, err := sp.Screen(ctx)
		return err == nil && strings.Contains(sc.Rows[sc.CursorRow], "rm -rf /tmp/nothing-here")
	})
	if _, err := c.Return(ctx); err != nil {
		t.Fatal(err)
	}
	res := h.prompt(sp.ID(), "echo clean-$((6*7))", 0)
	if res.Handback == nil || res.Handback.HalfTyped != "rm -rf /tmp/nothing-here" {
		t.Fatalf("hand-back %+v", res.Handback)
	}
	if !hasLine(res.Viewport, "clean-42") || res.ForeignInput != "rm -rf /tmp/nothing-here" {
		t.Fatalf("the command did not run as sent: foreign %q, viewport %q", res.ForeignInput, res.Viewport)
	}
}

// A half-typed line is discarded whatever state the person left the line
// editor in, and whatever it printed meanwhile, on the path of Control.Type
// (the path the live view's socket and the host link end on): the keys
// one per call as a page sends them, the terminal resized during the hold
// (readline redraws its line after the SIGWINCH, without the shell's
// marker: the prompt tracker loses the line, which the old clear took for
// "not at the prompt" and wrote the agent's command behind the person's
// line, issue 35). The agent's next command runs exactly as sent, and the
// hand-back names the line.
func TestHandBackDiscardsTheLineInAnyState(t *testing.T) {
	cases := []struct {
		name, keys, halfTyped string
		resize                bool
	}{
		{"redrawn by a resize", "echo half-typed-X", "echo half-typed-X", true},
		{"ESC pending", "echo esc-X\x1b", `echo esc-X\x1b`, false},
		{"half an arrow key, redrawn", "echo arrow-X\x1b[", `echo arrow-X\x1b[`, true},
		{"erased to nothing", "echo gone-X" + strings.Repeat("\x7f", 11), "", false},
		{"multi-byte, redrawn", "echo é日本-X", "echo é日本-X", true},
		{"bracketed paste left open", "\x1b[200~echo pasted-X", `\x1b[200~echo pasted-X`, false},
	}
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := h.spawn(messages.SpawnRequest{})
			ctx := testkit.Ctx(t)
			c, err := sp.TakeControl(ctx, messages.TakeControlRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.keys {
				if err := c.Type(ctx, []byte(string(k))); err != nil {
					t.Fatal(err)
				}
			}
			// The shell took every key, as it has by the time a person
			// moves to the button: the kernel shows it waiting again with
			// its input read.
			if w, err := sp.Wait(ctx, messages.WaitPolicy{}); err != nil || w.WaitReason != messages.WaitStdinRead {
				t.Fatalf("wait during the hold: %v, %+v", err, w)
			}
			if tc.resize {
				var seq uint64
				testkit.WaitFor(t, 10*time.Second, "the typed line", func() bool {
					sc, err := sp.Screen(ctx)
					seq = sc.Seq
					return err == nil && strings.HasPrefix(sc.Rows[sc.CursorRow], "$ echo ") && strings.Contains(sc.Rows[sc.CursorRow], "-X")
				})
				if err := c.Resize(ctx, 30, 120); err != nil {
					t.Fatal(err)
				}
				// The shell redraws the line for the new width: output
				// after the resize.
				testkit.WaitFor(t, 10*time.Second, "the redrawn line", func() bool {
					sc, err := sp.Screen(ctx)
					return err == nil && sc.Width == 120 && sc.Seq > seq+1 && strings.Contains(sc.Rows[sc.CursorRow], "-X")
				})
			}
			hb, err := c.Return(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if hb.HalfTyped != tc.halfTyped {
				t.Fatalf("the hand-back names %q, want %q", hb.HalfTyped, tc.halfTyped)
			}
			res := h.prompt(sp.ID(), "echo agent-$((6*7))", 0)
			if res.Handback == nil || res.Handback.HalfTyped != tc.halfTyped {
				t.Fatalf("the first result's hand-back %+v", res.Handback)
			}
			rd, err := sp.Read(ctx, messages.ReadRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var command string
			for _, l := range strings.Split(rd.Text, "\n") {
				if strings.Contains(l, "agent-$((6*7))") {
					command = l
				}
			}
			if command != "$ echo agent-$((6*7))" || !hasLine(res.Viewport, "agent-42") {
				t.Fatalf("the command did not run as sent (foreign %q):\n%s", res.ForeignInput, rd.Text)
			}
		})
	}
}

// Input from a hold that moved on is refused and never written: after
// the hand-back, and after another person took control.
func TestStaleHolderRefused(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	a, err := sp.TakeControl(ctx, messages.TakeControlRequest{Person: "page-a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := sp.TakeControl(ctx, messages.TakeControlRequest{Person: "page-b"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Epoch() <= a.Epoch() {
		t.Fatalf("epochs %d then %d", a.Epoch(), b.Epoch())
	}
	if err := a.Type(ctx, []byte("echo stale-a\r")); !errors.Is(err, messages.ErrControlStale) {
		t.Fatalf("a's input after b took control: %v", err)
	}
	if _, err := a.Return(ctx); !errors.Is(err, messages.ErrControlStale) {
		t.Fatalf("a's hand-back after b took control: %v", err)
	}
	if err := a.Resize(ctx, 30, 90); !errors.Is(err, messages.ErrControlStale) {
		t.Fatalf("a's resize after b took control: %v", err)
	}
	hb, err := b.Return(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hb.People, []string{"page-a", "page-b"}) {
		t.Fatalf("people %v", hb.People)
	}
	if err := b.Type(ctx, []byte("echo stale-b\r")); !errors.Is(err, messages.ErrControlStale) {
		t.Fatalf("b's input after its hand-back: %v", err)
	}
	res := h.prompt(sp.ID(), "echo agent", 0)
	if strings.Contains(res.Viewport, "stale") {
		t.Fatalf("a stale holder's input was written: %q", res.Viewport)
	}
	if rd, err := sp.Read(ctx, messages.ReadRequest{}); err != nil || strings.Contains(rd.Text, "stale-") {
		t.Fatalf("a stale holder's input was written: %v %q", err, rd.Text)
	}
}

// A hold with no input for its idle timeout comes back to the agent by
// itself, and the agent's next result says so.
func TestControlIdleTimeoutHandsBack(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	sub := sp.Subscribe()
	defer sub.Close()
	if _, err := sp.TakeControl(ctx, messages.TakeControlRequest{IdleTimeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	for {
		evt, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := evt.(*protocol.EventControlChanged); ok && !e.Control.Person {
			if e.Handback == nil || e.Handback.Reason != messages.HandbackIdle {
				t.Fatalf("event %+v", e)
			}
			break
		}
	}
	rd, err := sp.Read(ctx, messages.ReadRequest{})
	if err != nil || rd.Handback == nil || rd.Handback.Reason != messages.HandbackIdle {
		t.Fatalf("read after the idle hand-back: %v %+v", err, rd.Handback)
	}
	h.prompt(sp.ID(), "echo agent", 0)
}

// Two people (as two console pages) and the agent race for the input:
// exactly one holds it at a time, and no input from a hold that moved on
// is written (the stream shows each input after its holder's take and
// before the change that ends it). bench/ runs 1,000 rounds.
func TestControlRaces(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	var wg sync.WaitGroup
	done := make(chan struct{})
	page := func(name string) {
		for range 100 {
			c, err := sp.TakeControl(ctx, messages.TakeControlRequest{Person: name})
			if err != nil {
				t.Error(err)
				return
			}
			if err := c.Type(ctx, []byte("# "+name+"\r")); err != nil && !errors.Is(err, messages.ErrControlStale) {
				t.Error(err)
				return
			}
			if _, err := c.Return(ctx); err != nil && !errors.Is(err, messages.ErrControlStale) {
				t.Error(err)
				return
			}
		}
	}
	wg.Go(func() { page("page-a") })
	wg.Go(func() { page("page-b") })
	var agent sync.WaitGroup
	agent.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			_, err := sp.Send(ctx, messages.SendRequest{Text: ": agent", Submit: true})
			if err != nil && !errors.Is(err, messages.ErrControlHeld) {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	close(done)
	agent.Wait()
	stale, controls, err := testkit.ControlWrites(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 || controls < 200 {
		t.Fatalf("%d control events; inputs out of turn: %v", controls, stale)
	}
}

// A background send in flight settles the same way when a person takes
// over, and a new one is refused while they hold the input.
func TestTakeControlSettlesABackgroundSend(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	id, err := h.svc.StartTask(ctx, h.owner, messages.TaskRequest{Session: sp.ID(), Send: messages.SendRequest{Text: "sleep 30", Submit: true}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "sleep in the foreground", func() bool {
		sn, err := sp.Describe(ctx)
		return err == nil && sn.Activity != nil && sn.Activity.Program == "sleep"
	})
	if _, err := sp.TakeControl(ctx, messages.TakeControlRequest{}); err != nil {
		t.Fatal(err)
	}
	snap, finished, err := h.svc.TaskStatus(ctx, h.owner, id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-finished:
	case <-ctx.Done():
		t.Fatal("the background send did not settle")
	}
	if snap, _, err = h.svc.TaskStatus(ctx, h.owner, id); err != nil || !strings.Contains(snap.Detail, "taken over") {
		t.Fatalf("task %+v, %v", snap, err)
	}
	_, err = h.svc.StartTask(ctx, h.owner, messages.TaskRequest{Session: sp.ID(), Send: messages.SendRequest{Text: "echo bg", Submit: true}})
	if !errors.Is(err, messages.ErrControlHeld) {
		t.Fatalf("a background send while held: %v, want CONTROL_HELD", err)
	}
}
