package teardown

import (
	"context"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/ptyactor/ptyactor/probes/linux"
)

const (
	tagA = "PTYACTOR_SESSION_TAG=aaaa"
	tagB = "PTYACTOR_SESSION_TAG=bbbb"
)

// adoptFixture is a host (this test process) that adopts orphans, running
// the shells of two sessions, R (tag A) and S (tag B):
//
//	host ─ R (tag A) ─ 11                 R's tree
//	     ─ S (tag B)                      another session's shell
//	     ─ 50 (setsid, tag A) ─ 51 (env -i)   R's daemon and its child
//	     ─ 52 (setsid, tag B)             S's daemon
//	     ─ 53 (environ unreadable)
//	     ─ 54 (tag A, started before R)
//	     ─ 56 (tag A, zombie)
//	     ─ 57 (tag A with a suffix)
//	     ─ 58 (no tag: the host's own child)
//	1    ─ 55 (setsid, tag A)             escaped past the host
func adoptFixture() (*fakeProc, linux.Identity) {
	host := os.Getpid()
	R, S := f(1), f(2)
	p := newFakeProc(
		proc(R, host, R, 100),
		proc(f(11), R, R, 111),
		proc(S, host, S, 90),
		proc(f(50), host, f(50), 150),
		proc(f(51), f(50), f(50), 151),
		proc(f(52), host, f(52), 152),
		proc(f(53), host, f(53), 153),
		proc(f(54), host, f(54), 99),
		proc(f(55), 1, f(55), 155),
		proc(f(56), host, f(56), 156),
		proc(f(57), host, f(57), 157),
		proc(f(58), host, f(58), 158),
	)
	z, _ := p.get(f(56))
	z.State = 'Z'
	p.set(z)
	for _, pid := range []int{R, f(11), f(50), f(54), f(55), f(56)} {
		p.setEnv(pid, "HOME=/x", tagA)
	}
	p.setEnv(S, tagB)
	p.setEnv(f(52), tagB)
	p.setEnv(f(51)) // env -i
	p.setEnv(f(57), tagA+"x")
	p.setEnv(f(58), "HOME=/x")
	return p, linux.Identity{PID: R, StartTime: 100}
}

func TestCaptureAdoptsOnlyTaggedOrphans(t *testing.T) {
	p, root := adoptFixture()
	a := adoption{host: os.Getpid(), tag: tagA}
	for _, c := range []struct {
		name   string
		reaped bool
		adopt  adoption
		want   []int
	}{
		{"adopting", false, a, []int{f(51), f(11), f(50)}},
		{"not adopting", false, adoption{}, []int{f(11)}},
		{"root reaped", true, a, []int{f(51), f(11), f(50)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stats, err := capture(procTable{p}, root, c.reaped, c.adopt)
			if err != nil {
				t.Fatal(err)
			}
			if got := statPids(stats); !slices.Equal(got, c.want) {
				t.Fatalf("capture = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("root pid recycled", func(t *testing.T) {
		// The shell was reaped and its pid reused: its session is gone,
		// but its tagged daemon is still its own.
		p, root := adoptFixture()
		p.set(proc(root.PID, 1, root.PID, 999))
		p.remove(f(11))
		stats, err := capture(procTable{p}, root, true, a)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := statPids(stats), []int{f(51), f(50)}; !slices.Equal(got, want) {
			t.Fatalf("capture = %v, want %v", got, want)
		}
	})
}

func TestTreeAdoptsTaggedOrphansOnly(t *testing.T) {
	p, root := adoptFixture()
	sig := &fakeSignaler{proc: p}
	opts := fakeOpts(p, sig)
	opts.AdoptTag = tagA
	rep, err := Tree(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []sent{{f(51), syscall.SIGTERM}, {f(11), syscall.SIGTERM}, {f(50), syscall.SIGTERM}}
	if got := sig.calls(); !slices.Equal(got, want) {
		t.Fatalf("signals = %v, want %v", got, want)
	}
	if !slices.Equal(rep.Killed, []int{f(51), f(11), f(50)}) {
		t.Fatalf("Killed = %v", rep.Killed)
	}
	// A fixture's zombies are not this process's children: nothing is
	// reaped through a ProcReader other than the real procfs.
	if len(rep.Reaped) != 0 {
		t.Fatalf("Reaped = %v through a fixture", rep.Reaped)
	}

	// Without the tag, the host's children are never touched.
	p, root = adoptFixture()
	sig = &fakeSignaler{proc: p}
	if _, err := Tree(context.Background(), root, fakeOpts(p, sig)); err != nil {
		t.Fatal(err)
	}
	if got, want := sig.calls(), []sent{{f(11), syscall.SIGTERM}}; !slices.Equal(got, want) {
		t.Fatalf("signals without AdoptTag = %v, want %v", got, want)
	}
}

func TestTreeRescanAdoptsDaemonForkedDuringTeardown(t *testing.T) {
	// While R's child handles TERM, a daemon of R's session (tag A)
	// re-parents to the host; the rescan adopts it and it gets KILL. A
	// daemon of another session appearing at the same moment is left alone.
	p, root := adoptFixture()
	host := os.Getpid()
	sig := &fakeSignaler{proc: p, ignoreTERM: map[int]bool{f(11): true}}
	sig.onSignal = func(pid int, s syscall.Signal) {
		if pid == f(11) && s == syscall.SIGTERM {
			p.set(proc(f(60), host, f(60), 160))
			p.setEnv(f(60), tagA)
			p.set(proc(f(61), host, f(61), 161))
			p.setEnv(f(61), tagB)
		}
	}
	opts := fakeOpts(p, sig)
	opts.AdoptTag = tagA
	if _, err := Tree(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sig.calls(), sent{f(60), syscall.SIGKILL}) {
		t.Fatalf("late daemon of the session escaped: %v", sig.calls())
	}
	if sig.signalled(f(61)) || sig.signalled(f(52)) || sig.signalled(f(58)) {
		t.Fatalf("a process of another session or of the host was signalled: %v", sig.calls())
	}
}
