package faulty_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// running answers "sleep" and "make" by leaving the command running.
func running(line string) faulty.Reply {
	if line == "sleep" || line == "make" {
		return faulty.Reply{Output: "working\r\n", Running: true}
	}
	return faulty.Echo(line)
}

// A held signal is counted as started but takes effect only when released,
// and then as it would have: the runtime's SIGINT on cancel ends the
// command and its prompt settles the send.
func TestHoldKeepsASignalInFlight(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(running))
	r := newRig(t, b)
	id, s := r.spawn()
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	b.Hold(faulty.OpSignal, release)
	op, err := r.svc.Session(r.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the write", func() bool { return len(s.Writes()) == 1 })
	if !op.Cancel() {
		t.Fatal("cancel refused")
	}
	if err := b.Entered(testkit.Ctx(t), faulty.OpSignal, 1); err != nil {
		t.Fatal(err)
	}
	if got := s.Signals(); len(got) != 0 {
		t.Fatalf("a held signal took effect: %v", got)
	}
	if n := b.Calls(faulty.OpSignal); n != 1 {
		t.Fatalf("%d signal calls counted, want the held one", n)
	}
	close(release)
	released = true
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("interrupted send: %+v, %v; want stdin_read with exit 130", res, err)
	}
	if got := s.Signals(); !slices.Equal(got, []messages.Signal{messages.SIGINT}) {
		t.Fatalf("signals %v, want the released SIGINT", got)
	}
	r.usable(id)
}

// Finish ends a command a Responder left running, with the test's output
// and status.
func TestFinishEndsARunningCommand(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(running))
	r := newRig(t, b)
	id, s := r.spawn()
	op, err := r.svc.Session(r.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "make", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the write", func() bool { return len(s.Writes()) == 1 })
	s.Emit("built\r\n")
	s.Finish(3)
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("finished send: %+v, %v; want stdin_read with exit 3", res, err)
	}
	if !strings.Contains(res.Viewport, "working\r\nbuilt\r\n$ ") {
		t.Fatalf("viewport %q, want the command's output, then the prompt", res.Viewport)
	}
	r.usable(id)
}
