package faulty_test

// Sends under faults: writes that fail or hang, output in pieces, a shell
// that exits mid-send, probes that fail or hang, a cancel that interrupts,
// and the elapsed time a send reports.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestWriteFails(t *testing.T) {
	for _, op := range []faulty.Op{faulty.OpWrite, faulty.OpTryWrite} {
		t.Run(string(op), func(t *testing.T) {
			b := faulty.New("shell")
			r := newRig(t, b)
			id, s := r.spawn()
			s.Script(op, faulty.Fail(errInjected))
			_, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "lost", Submit: true})
			if !errors.Is(err, messages.ErrTransport) || !errors.Is(err, errInjected) {
				t.Fatalf("send: %v, want ErrTransport wrapping the write error", err)
			}
			if w := s.Writes(); len(w) != 0 {
				t.Fatalf("writes %q reached the terminal", w)
			}
			r.usable(id)
			got := r.settlements(id, 2)
			if len(got) != 2 || !errors.Is(got[0].Err, errInjected) || got[1].Err != nil {
				t.Fatalf("settlements %+v, want the failure then the success, once each", got)
			}
		})
	}
}

// A write that blocks (the program does not read its input) is abandoned
// when the caller cancels: the caller's cause comes back, the rest of the
// input is never written, and the session takes the next send.
func TestWriteHangsThenCancel(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpWrite, faulty.Hang())
	cause := errors.New("agent cancelled")
	ctx := cancelOnEntry(t, b, faulty.OpWrite, 1, cause)
	start := time.Now()
	res, err := r.svc.Session(r.owner, id).Send(ctx, messages.SendRequest{Text: "stuck", Submit: true})
	if !errors.Is(err, cause) {
		t.Fatalf("send: %v, want the caller's cause", err)
	}
	if limit := time.Duration(testkit.Config().TimeoutMs) * time.Millisecond; time.Since(start) >= limit {
		t.Fatalf("the cancelled send took %v: it waited for its deadline", time.Since(start))
	}
	// The abandoned write may have reached the program in part, so the
	// cancel interrupts it; its prompt settles the send.
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("cancelled send settled as %+v, want the interrupt's prompt", res)
	}
	if w, sig := s.Writes(), s.Signals(); len(w) != 0 || len(sig) != 1 || sig[0] != messages.SIGINT {
		t.Fatalf("writes %q, signals %v: want nothing written and one SIGINT", w, sig)
	}
	r.usable(id)
	if got := r.settlements(id, 2); len(got) != 2 {
		t.Fatalf("settlements %+v, want two", got)
	}
}

// A write that blocks and is never cancelled: the send times out, and the
// blocked write must not keep the session's send slot forever.
func TestWriteHangsUntilDeadline(t *testing.T) {
	b := faulty.New("shell")
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpWrite, faulty.Hang())
	res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "stuck", Submit: true})
	if err != nil || res.WaitReason != messages.WaitTimeout {
		t.Fatalf("send: %+v, %v; want timeout", res, err)
	}
	r.usable(id)
}

// Output in one-byte chunks gives the same viewport as output in one piece.
func TestBytewiseOutput(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		return faulty.Reply{Output: strings.Repeat("line of output\r\n", 20), Code: 3}
	}))
	r := newRig(t, b)
	id, s := r.spawn()
	whole, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "cmd", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Script(faulty.OpWrite, faulty.Bytewise())
	split, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "cmd", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if split.Viewport != whole.Viewport || split.WaitReason != messages.WaitStdinRead || split.ExitCode == nil || *split.ExitCode != 3 {
		t.Fatalf("bytewise %+v\nwhole %+v", split, whole)
	}
}

// The shell exits while the send waits: the send settles session_exit,
// once; the session refuses further sends and closes cleanly.
func TestExitMidSend(t *testing.T) {
	for _, f := range []faulty.Fault{faulty.Exit(7), faulty.OutputAfterExit(7)} {
		t.Run(f.String(), func(t *testing.T) {
			b := faulty.New("shell")
			r := newRig(t, b)
			id, s := r.spawn()
			s.Script(faulty.OpWrite, f)
			res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "exit 7", Submit: true})
			if err != nil || res.WaitReason != messages.WaitSessionExit || !res.Status.Exited || *res.Status.ExitCode != 7 {
				t.Fatalf("send: %+v, %v; want session_exit with code 7", res, err)
			}
			if _, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "x"}); !errors.Is(err, messages.ErrSessionExited) {
				t.Fatalf("send after exit: %v, want ErrSessionExited", err)
			}
			if got := r.settlements(id, 1); len(got) != 1 {
				t.Fatalf("settlements %+v, want one", got)
			}
			// Output that arrived after the exit is not lost: it reaches
			// the scrollback (perhaps after the send settled), and reads
			// still work on an exited session.
			ctx := testkit.Ctx(t)
			testkit.WaitFor(t, 10*time.Second, "the late output in the scrollback", func() bool {
				page, err := r.svc.Session(r.owner, id).Read(ctx, messages.ReadRequest{})
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				return strings.Contains(page.Text, "exit 7")
			})
			if err := r.closeAll(); err != nil {
				t.Fatalf("dispose: %v", err)
			}
			if a := r.activity(); a.Active {
				t.Fatalf("activity: %+v", a)
			}
		})
	}
}

// The exact tier: a program that reads the terminal and prints no prompt
// marker is proven ready by the probe; a probe that fails, panics or lies
// leaves the send to silence, and the next look works again.
func TestProbeFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults []faulty.Fault
		want   messages.WaitReason
	}{
		{"truthful", nil, messages.WaitStdinRead},
		{"fails", []faulty.Fault{faulty.Fail(errInjected)}, messages.WaitStdinRead},
		{"panics", []faulty.Fault{faulty.Panic("prober bug")}, messages.WaitStdinRead},
		{"lies unknown", repeat(faulty.Unknown(), 1000), messages.WaitInferredIdle},
		{"lies unsupported", []faulty.Fault{faulty.Observe(backend.StdinObservation{})}, messages.WaitInferredIdle},
		{"claims a wait without consumed input", repeat(faulty.Observe(backend.StdinObservation{Supported: true, Waiting: true, Drained: true}), 1000), messages.WaitInferredIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := faulty.New("repl", faulty.Reader())
			r := newRig(t, b)
			id, s := r.spawn()
			s.Script(faulty.OpProbe, tt.faults...)
			res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "1+1", Submit: true})
			if err != nil || res.WaitReason != tt.want {
				t.Fatalf("send: %+v, %v; want %s", res, err, tt.want)
			}
			if tt.want == messages.WaitStdinRead && res.Reader != "reader" {
				t.Fatalf("reader %q", res.Reader)
			}
			if got := r.settlements(id, 1); len(got) != 1 {
				t.Fatalf("settlements %+v", got)
			}
		})
	}
}

func repeat(f faulty.Fault, n int) []faulty.Fault {
	out := make([]faulty.Fault, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// The ordinary cancel: a command runs, the caller's context ends, a real
// SIGINT interrupts it and the prompt that follows settles the send; the
// caller gets its cause and the result.
func TestCancelRunningCommand(t *testing.T) {
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		if line == "sleep" {
			return faulty.Reply{Output: "zzz\r\n", Running: true}
		}
		return faulty.Echo(line)
	}))
	r := newRig(t, b)
	id, s := r.spawn()
	cause := errors.New("agent moved on")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	op, err := r.svc.Session(r.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	// Output shows the command runs; then the caller gives up.
	for rd := (messages.SendRead{}); !strings.Contains(rd.Delta, "zzz"); {
		if rd, err = op.ReadOutput(testkit.Ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	cancel(cause)
	if !op.Cancel() {
		t.Fatal("cancel refused")
	}
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || res.WaitReason != messages.WaitStdinRead || *res.ExitCode != 130 {
		t.Fatalf("cancelled send: %+v, %v; want the interrupt's prompt", res, err)
	}
	if _, err := op.Result(ctx); err != nil {
		t.Fatalf("a settled result must not turn into the context's cause: %v", err)
	}
	// Send with a context that ends: the cause comes back with the result.
	ctx2 := cancelOnEntry(t, b, faulty.OpTryWrite, 2, cause)
	res, err = r.sendAfterSettled(ctx2, id, messages.SendRequest{Text: "sleep", Submit: true})
	if !errors.Is(err, cause) || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("send: %+v, %v; want the result and the caller's cause", res, err)
	}
	if sig := s.Signals(); len(sig) != 2 {
		t.Fatalf("signals %v, want one SIGINT per cancel", sig)
	}
	r.usable(id)
	if got := r.settlements(id, 3); len(got) != 3 {
		t.Fatalf("settlements %+v", got)
	}
}

// A probe stuck in the kernel (reading /proc of a process in D state):
// sends fall back to silence instead of waiting on it, and closing the
// session releases it.
func TestProbeHangs(t *testing.T) {
	b := faulty.New("repl", faulty.Reader())
	r := newRig(t, b)
	id, s := r.spawn()
	s.Script(faulty.OpProbe, faulty.Hang())
	res, err := r.svc.Session(r.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "1+1", Submit: true})
	if err != nil || res.WaitReason != messages.WaitInferredIdle {
		t.Fatalf("send: %+v, %v; want inferred_idle", res, err)
	}
	if rep, err := r.svc.Session(r.owner, id).Close(testkit.Ctx(t), "test"); err != nil || rep.Joined {
		t.Fatalf("kill: %v", err)
	}
	r.waitIdle()
}

// skewClock is the system clock moved forward on demand, so a test can
// make time pass inside a backend call without sleeping.
type skewClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *skewClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *skewClock) AfterFunc(d time.Duration, f func()) actors.Timer { return time.AfterFunc(d, f) }

func (c *skewClock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// Elapsed counts from the reservation: time spent in the inline write at
// reservation (where a fast program may already run and answer) belongs to
// the send. It was measured from the send actor's creation, after it, so a
// command could look faster than its own sleep.
func TestElapsedIncludesInlineWrite(t *testing.T) {
	clock := &skewClock{}
	b := faulty.New("shell", faulty.WithResponder(func(line string) faulty.Reply {
		if line == "slow" {
			clock.advance(300 * time.Millisecond) // the inline write "takes" 300ms
		}
		return faulty.Echo(line)
	}))
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testkit.Config(), Clock: clock, Backends: []backend.Backend{b}})
	owner := testkit.Owner(t, svc, "clock")
	s, err := svc.Spawn(testkit.Ctx(t), owner, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Session(owner, s.ID()).Send(testkit.Ctx(t), messages.SendRequest{Text: "slow", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if res.Elapsed < 300*time.Millisecond {
		t.Fatalf("elapsed %v, want at least the 300ms spent in the inline write", res.Elapsed)
	}
}
