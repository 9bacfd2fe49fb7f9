package teardown

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// smallTree is R ─ a ─ b, all in R's session.
func smallTree() (*fakeProc, linux.Identity) {
	R, a, b := f(1), f(2), f(3)
	p := newFakeProc(proc(R, f(0), R, 100), proc(a, R, R, 200), proc(b, a, R, 300))
	return p, linux.Identity{PID: R, StartTime: 100}
}

func fakeOpts(p *fakeProc, s Signaler) Options {
	return Options{Grace: 50 * time.Millisecond, Poll: time.Millisecond, Proc: p, Signaler: s}
}

func TestTreeFakeOrder(t *testing.T) {
	p, root := smallTree()
	sig := &fakeSignaler{proc: p}
	rep, err := Tree(context.Background(), root, fakeOpts(p, sig))
	if err != nil {
		t.Fatal(err)
	}
	want := []sent{{f(3), syscall.SIGTERM}, {f(2), syscall.SIGTERM}}
	if got := sig.calls(); !slices.Equal(got, want) {
		t.Fatalf("signals = %v, want %v (children first, no KILL needed)", got, want)
	}
	if !slices.Equal(rep.Killed, []int{f(3), f(2)}) || len(rep.Survivors) != 0 {
		t.Fatalf("report = %+v", rep)
	}
}

func TestTreePidReuseNeverSignalled(t *testing.T) {
	p, root := smallTree()
	a := f(2)
	// Right after the capture scan reads a, a exits and its pid is reused by
	// an unrelated process that ignores TERM.
	p.after(a, 1, func(p *fakeProc) { p.set(proc(a, 1, a, 999)) })
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{a: true}}
	rep, err := Tree(context.Background(), root, fakeOpts(p, sig))
	if err != nil {
		t.Fatal(err)
	}
	if sig.signalled(a) {
		t.Fatalf("recycled pid %d was signalled: %v", a, sig.calls())
	}
	if !slices.Equal(rep.Killed, []int{f(3)}) {
		t.Fatalf("Killed = %v, want only %d", rep.Killed, f(3))
	}
	if s, _ := p.get(a); !s.Alive() {
		t.Fatalf("the process that now owns pid %d was hurt: %+v", a, s)
	}
}

func TestTreeRootChangedSignalsNothing(t *testing.T) {
	p, root := smallTree()
	p.set(proc(root.PID, 1, root.PID, 777)) // the root's pid now names another process
	sig := &fakeSignaler{proc: p}
	rep, err := Tree(context.Background(), root, fakeOpts(p, sig))
	if !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Tree = %v; want ErrRootChanged", err)
	}
	if len(sig.calls()) != 0 || len(rep.Killed) != 0 {
		t.Fatalf("signals sent from a changed root: %v", sig.calls())
	}
}

func TestTreeContinuesStopped(t *testing.T) {
	p, root := smallTree()
	b, _ := p.get(f(3))
	b.State = 'T'
	p.set(b)
	sig := &fakeSignaler{proc: p}
	if _, err := Tree(context.Background(), root, fakeOpts(p, sig)); err != nil {
		t.Fatal(err)
	}
	want := []sent{{f(3), syscall.SIGTERM}, {f(3), syscall.SIGCONT}, {f(2), syscall.SIGTERM}}
	if got := sig.calls(); !slices.Equal(got, want) {
		t.Fatalf("signals = %v, want %v", got, want)
	}
}

func TestTreeRescanAdoptsForks(t *testing.T) {
	p, root := smallTree()
	a := f(2)
	n, m := f(4), f(5)
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{a: true, n: true, m: true}}
	// While a handles TERM it forks n, and a double fork leaves m in the
	// root's session under init.
	sig.onSignal = func(pid int, s syscall.Signal) {
		if pid == a && s == syscall.SIGTERM {
			p.set(proc(n, a, root.PID, 400))
			p.set(proc(m, 1, root.PID, 500))
		}
	}
	rep, err := Tree(context.Background(), root, fakeOpts(p, sig))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{n, m, a} {
		if !slices.Contains(sig.calls(), sent{pid, syscall.SIGKILL}) || !slices.Contains(rep.Killed, pid) {
			t.Errorf("pid %d not killed; signals %v, report %+v", pid, sig.calls(), rep)
		}
	}
	if slices.Contains(sig.calls(), sent{n, syscall.SIGTERM}) {
		t.Errorf("a process found by the rescan got TERM; it should go straight to KILL")
	}
}

func TestTreeKillRoundCatchesLateFork(t *testing.T) {
	p, root := smallTree()
	a, q := f(2), f(6)
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{a: true}}
	// a forks q after the rescan but before its own SIGKILL lands.
	var forked atomic.Bool
	sig.onSignal = func(pid int, s syscall.Signal) {
		if pid == a && s == syscall.SIGKILL && !forked.Swap(true) {
			p.set(proc(q, a, root.PID, 600))
		}
	}
	rep, err := Tree(context.Background(), root, fakeOpts(p, sig))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sig.calls(), sent{q, syscall.SIGKILL}) || !slices.Contains(rep.Killed, q) {
		t.Fatalf("late fork %d escaped: signals %v", q, sig.calls())
	}
}

func TestTreeSurvivorThenRetry(t *testing.T) {
	p, root := smallTree()
	a := f(2)
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{a: true}, refuse: map[int]bool{a: true}}
	rep, err := Tree(context.Background(), root, fakeOpts(p, sig))
	var se *SurvivorsError
	if !errors.As(err, &se) || !errors.Is(err, ErrSurvivors) || !errors.Is(err, errRefused) {
		t.Fatalf("Tree = %v; want *SurvivorsError wrapping the refusal", err)
	}
	if !slices.Equal(se.Survivors, []int{a}) || !slices.Equal(rep.Survivors, []int{a}) {
		t.Fatalf("survivors = %v / %v, want [%d]", se.Survivors, rep.Survivors, a)
	}
	if !strings.Contains(err.Error(), "1 process(es) survived SIGKILL") {
		t.Errorf("message = %q", err)
	}

	sig.mu.Lock()
	sig.refuse = nil
	sig.mu.Unlock()
	rep, err = Tree(context.Background(), root, fakeOpts(p, sig))
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if !slices.Equal(rep.Killed, []int{a}) || len(rep.Survivors) != 0 {
		t.Fatalf("retry report = %+v", rep)
	}
}

// goneSignaler reports every process as already gone, removing it.
type goneSignaler struct{ p *fakeProc }

func (g goneSignaler) Signal(id linux.Identity, _ syscall.Signal) error {
	g.p.remove(id.PID)
	return ErrGone
}

func TestTreeGoneIsNotFailure(t *testing.T) {
	p, root := smallTree()
	rep, err := Tree(context.Background(), root, fakeOpts(p, goneSignaler{p}))
	if err != nil || len(rep.Killed) != 0 || len(rep.Survivors) != 0 {
		t.Fatalf("Tree = %+v, %v; want an empty report and no error", rep, err)
	}
}

func TestTreeContextAlreadyDone(t *testing.T) {
	p, root := smallTree()
	sig := &fakeSignaler{proc: p}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Tree(ctx, root, fakeOpts(p, sig)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Tree = %v; want context.Canceled", err)
	}
	if len(sig.calls()) != 0 {
		t.Fatalf("signals sent with a dead context: %v", sig.calls())
	}
}

func TestTreeContextCancelledDuringWait(t *testing.T) {
	p, root := smallTree()
	a := f(2)
	cause := errors.New("service shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{a: true}}
	sig.onSignal = func(pid int, s syscall.Signal) {
		if pid == a && s == syscall.SIGTERM {
			cancel(cause)
		}
	}
	opts := fakeOpts(p, sig)
	opts.Grace = time.Hour
	start := time.Now()
	_, err := Tree(ctx, root, opts)
	if !errors.Is(err, cause) {
		t.Fatalf("Tree = %v; want the cancel cause", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Tree took %v after cancel", d)
	}
	if !slices.Contains(sig.calls(), sent{a, syscall.SIGKILL}) {
		t.Fatalf("cancel left TERM-ignoring %d running: %v", a, sig.calls())
	}
}

func TestTreeInjectedClock(t *testing.T) {
	p, root := smallTree()
	a := f(2)
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{a: true}}
	// Every reading is an hour later, so each grace period ends at once.
	var now atomic.Int64
	opts := fakeOpts(p, sig)
	opts.Grace = time.Hour
	opts.Clock = func() time.Time { return time.Unix(0, now.Add(int64(time.Hour))) }
	start := time.Now()
	if _, err := Tree(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Tree took %v; the injected clock was ignored", d)
	}
}

func TestOptionsDefaults(t *testing.T) {
	r := newRun(linux.Identity{PID: 2}, Options{})
	if r.grace != DefaultGrace || r.poll != DefaultPoll || r.clock == nil || r.proc == nil || r.sig == nil {
		t.Fatalf("defaults: %+v", r)
	}
	if r := newRun(linux.Identity{PID: 2}, Options{Poll: time.Second}); r.poll != MaxPoll {
		t.Fatalf("poll %v not capped at %v", r.poll, MaxPoll)
	}
}

func TestSurvivorsError(t *testing.T) {
	err := error(&SurvivorsError{Survivors: []int{7, 9}})
	if !errors.Is(err, ErrSurvivors) || errors.Is(err, ErrGone) {
		t.Fatal("Is mismatch")
	}
	if got, want := err.Error(), "teardown: 2 process(es) survived SIGKILL: 7, 9"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
