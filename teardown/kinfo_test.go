package teardown

import (
	"context"
	"errors"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/probes/darwin"
	"github.com/ptyactor/ptyactor/probes/linux"
)

// t0 is a macOS p_starttime; records start at t0 plus their pid's offset
// in microseconds, so two of them can share a second.
var t0 = time.Unix(1764460290, 0)

func start(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }

// rec builds a record the way ListKinfo returns one: its own process group,
// no terminal, sleeping.
func rec(pid, ppid, sid int, st int8, comm string) darwin.Kinfo {
	return darwin.Kinfo{PID: pid, PPID: ppid, PGID: pid, SID: sid, TDev: darwin.NoDev, Stat: st, Start: start(pid - fakeBase), Comm: comm}
}

// kinfoFixture is a macOS table as sysctl kern.proc and getsid report it
// (R is the root shell, session R; pids are fakeBase+n):
//
//	kernel_task (pid 0), launchd (pid 1)
//	Terminal (0) ─ R ─ 11 vim, stopped ─ 12 ignores TERM
//	                 ─ 13 zombie
//	                 ─ 14 setsid (session 14) ─ 15
//	             ─ 40 another of Terminal's children
//	launchd ─ 20 (session R, double-forked away) ─ 21
//	        ─ 22 gone before getsid (SID -1)
//	        ─ 30 (session 30) ─ 31          unrelated
func kinfoFixture() *fakeKinfo {
	R := f(1)
	return newFakeKinfo(
		darwin.Kinfo{PID: 0, PPID: 0, SID: 0, TDev: darwin.NoDev, Stat: darwin.SRUN, Start: t0.Add(-time.Hour), Comm: "kernel_task"},
		darwin.Kinfo{PID: 1, PPID: 0, PGID: 1, SID: 1, TDev: darwin.NoDev, Stat: darwin.SSLEEP, Start: t0.Add(-time.Hour), Comm: "launchd"},
		rec(f(0), 1, f(0), darwin.SSLEEP, "Terminal"),
		rec(R, f(0), R, darwin.SSLEEP, "bash"),
		rec(f(11), R, R, darwin.SSTOP, "vim"),
		rec(f(12), f(11), R, darwin.SSLEEP, "ignterm"),
		rec(f(13), R, R, darwin.SZOMB, "sleep"),
		rec(f(14), R, f(14), darwin.SSLEEP, "daemon"),
		rec(f(15), f(14), f(14), darwin.SSLEEP, "worker"),
		rec(f(20), 1, R, darwin.SSLEEP, "double"),
		rec(f(21), f(20), R, darwin.SSLEEP, "sleep"),
		rec(f(22), 1, -1, darwin.SRUN, "gone"),
		rec(f(30), 1, f(30), darwin.SSLEEP, "other"),
		rec(f(31), f(30), f(30), darwin.SSLEEP, "other"),
		rec(f(40), f(0), f(40), darwin.SSLEEP, "login"),
	)
}

// fakeKinfo is a mutable macOS process table served as a kinfoSource. It
// also plays the kernel as a Signaler: it checks identities like
// ProcSignaler, turns TERM into a zombie (unless the pid ignores it or is
// stopped), KILL into a zombie, and CONT on a stopped pid into the
// delivery of its pending TERM.
type fakeKinfo struct {
	mu         sync.Mutex
	recs       map[int]darwin.Kinfo
	lists      int
	afterList  map[int]func(*fakeKinfo) // run, unlocked, after the n-th all
	ignoreTERM map[int]bool
	sent       []sent
}

func newFakeKinfo(recs ...darwin.Kinfo) *fakeKinfo {
	k := &fakeKinfo{recs: make(map[int]darwin.Kinfo), afterList: make(map[int]func(*fakeKinfo)), ignoreTERM: make(map[int]bool)}
	for _, r := range recs {
		k.recs[r.PID] = r
	}
	return k
}

func (k *fakeKinfo) set(r darwin.Kinfo) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recs[r.PID] = r
}

func (k *fakeKinfo) get(pid int) darwin.Kinfo {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.recs[pid]
}

// all returns the records newest first, as the kernel's allproc list does.
func (k *fakeKinfo) all() ([]darwin.Kinfo, error) {
	k.mu.Lock()
	out := make([]darwin.Kinfo, 0, len(k.recs))
	for _, r := range k.recs {
		out = append(out, r)
	}
	k.lists++
	hook := k.afterList[k.lists]
	k.mu.Unlock()
	if hook != nil {
		defer hook(k)
	}
	slices.SortFunc(out, func(a, b darwin.Kinfo) int { return b.PID - a.PID })
	return out, nil
}

func (k *fakeKinfo) read(pid int) (darwin.Kinfo, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.recs[pid]
	if !ok {
		return darwin.Kinfo{}, darwin.ErrNotFound
	}
	return r, nil
}

func (k *fakeKinfo) Signal(id linux.Identity, sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent = append(k.sent, sent{id.PID, sig})
	r, ok := k.recs[id.PID]
	if !ok || startMicros(r.Start) != id.StartTime {
		return ErrGone
	}
	switch {
	case sig == syscall.SIGKILL, sig == syscall.SIGTERM && !k.ignoreTERM[id.PID] && r.Stat != darwin.SSTOP:
		r.Stat = darwin.SZOMB
	case sig == syscall.SIGCONT && r.Stat == darwin.SSTOP && k.ignoreTERM[id.PID]:
		r.Stat = darwin.SSLEEP
	case sig == syscall.SIGCONT && r.Stat == darwin.SSTOP:
		r.Stat = darwin.SZOMB
	}
	k.recs[id.PID] = r
	return nil
}

func (k *fakeKinfo) calls() []sent {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.sent)
}

// kinfoTree runs Tree over the fixture table, as Tree does on macOS with
// the sysctl source.
func kinfoTree(ctx context.Context, root linux.Identity, k *fakeKinfo) (Report, error) {
	r := newRun(root, Options{Grace: 50 * time.Millisecond, Poll: time.Millisecond, Signaler: k})
	r.proc = kinfoTable{k}
	r.reapable = hostProcfs(r.proc)
	return r.run(ctx)
}

func kinfoRoot(k *fakeKinfo) linux.Identity { return statOf(k.get(f(1))).Identity() }

func TestStatOf(t *testing.T) {
	tty := int32(0x10000003)
	for _, tc := range []struct {
		name string
		in   darwin.Kinfo
		want linux.Stat
	}{
		{
			name: "foreground job",
			in:   darwin.Kinfo{PID: 700, PPID: 600, PGID: 700, SID: 600, TPGID: 700, TDev: tty, Stat: darwin.SRUN, Start: time.Unix(1764460291, 250001000), Comm: "python3"},
			want: linux.Stat{PID: 700, PPID: 600, PGRP: 700, Session: 600, TPGID: 700, State: 'R', StartTime: 1764460291250001, Comm: "python3"},
		},
		{
			name: "no terminal",
			in:   darwin.Kinfo{PID: 90, PPID: 1, PGID: 90, SID: 90, TDev: darwin.NoDev, Stat: darwin.SSLEEP, Start: time.Unix(1764460000, 0), Comm: "syslogd"},
			want: linux.Stat{PID: 90, PPID: 1, PGRP: 90, Session: 90, TPGID: -1, State: 'S', StartTime: 1764460000000000, Comm: "syslogd"},
		},
		{
			name: "being forked",
			in:   darwin.Kinfo{PID: 91, PPID: 90, SID: 90, TDev: darwin.NoDev, Stat: darwin.SIDL, Start: time.Unix(5, 1000)},
			want: linux.Stat{PID: 91, PPID: 90, Session: 90, TPGID: -1, State: 'R', StartTime: 5000001},
		},
		{
			name: "stopped",
			in:   darwin.Kinfo{PID: 92, PPID: 90, SID: 90, TPGID: 92, TDev: tty, Stat: darwin.SSTOP, Start: time.Unix(5, 2000), Comm: "vim"},
			want: linux.Stat{PID: 92, PPID: 90, Session: 90, TPGID: 92, State: 'T', StartTime: 5000002, Comm: "vim"},
		},
		{
			name: "zombie gone before getsid",
			in:   darwin.Kinfo{PID: 93, PPID: 90, SID: -1, TDev: darwin.NoDev, Stat: darwin.SZOMB, Start: time.Unix(5, 3000)},
			want: linux.Stat{PID: 93, PPID: 90, Session: -1, TPGID: -1, State: 'Z', StartTime: 5000003},
		},
		{
			name: "unknown state",
			in:   darwin.Kinfo{PID: 94, PPID: 90, SID: 90, TDev: darwin.NoDev, Stat: 9, Start: time.Unix(5, 4000)},
			want: linux.Stat{PID: 94, PPID: 90, Session: 90, TPGID: -1, State: '?', StartTime: 5000004},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statOf(tc.in)
			if got != tc.want {
				t.Fatalf("statOf = %+v\nwant   %+v", got, tc.want)
			}
			if got.Alive() != tc.in.Alive() {
				t.Errorf("Alive = %v; the record says %v", got.Alive(), tc.in.Alive())
			}
		})
	}
}

func TestStartMicrosTellsRecycledPids(t *testing.T) {
	// Two processes that held one pid within the same second: ps's lstart
	// prints the same time for both, p_starttime does not.
	a := statOf(darwin.Kinfo{PID: 700, Start: time.Unix(1764460291, 250001000)})
	b := statOf(darwin.Kinfo{PID: 700, Start: time.Unix(1764460291, 250002000)})
	if a.Identity() == b.Identity() {
		t.Fatalf("identities %+v and %+v are equal", a.Identity(), b.Identity())
	}
}

func TestKinfoTableList(t *testing.T) {
	k := kinfoFixture()
	stats, err := kinfoTable{k}.list()
	if err != nil {
		t.Fatal(err)
	}
	pids := statPids(stats)
	if !slices.IsSorted(pids) || len(pids) != len(k.recs)-1 || slices.Contains(pids, 0) {
		t.Fatalf("list = %v; want every pid but 0, sorted", pids)
	}
	for _, s := range stats {
		if s != statOf(k.get(s.PID)) {
			t.Errorf("pid %d = %+v; want %+v", s.PID, s, statOf(k.get(s.PID)))
		}
	}

	boom := errors.New("sysctl failed")
	if _, err := (kinfoTable{failing{err: boom}}).list(); !errors.Is(err, boom) {
		t.Fatalf("list with a failing source = %v; want it wrapped", err)
	}
}

func TestKinfoTableStat(t *testing.T) {
	k := kinfoFixture()
	tb := kinfoTable{k}
	s, err := tb.stat(f(11))
	if err != nil || s != statOf(k.get(f(11))) {
		t.Fatalf("stat = %+v, %v", s, err)
	}
	_, err = tb.stat(f(99))
	if !errors.Is(err, linux.ErrNotFound) || !errors.Is(err, darwin.ErrNotFound) {
		t.Fatalf("stat(missing) = %v; want linux.ErrNotFound wrapping darwin.ErrNotFound", err)
	}
	boom := errors.New("sysctl failed")
	if _, err := (kinfoTable{failing{err: boom}}).stat(f(11)); !errors.Is(err, boom) || errors.Is(err, linux.ErrNotFound) {
		t.Fatalf("stat with a failing source = %v; want it wrapped, not ErrNotFound", err)
	}
	if _, err := (kinfoTable{failing{wrongPID: f(12)}}).stat(f(11)); err == nil || errors.Is(err, linux.ErrNotFound) {
		t.Fatalf("stat answered for another pid = %v; want an error, not ErrNotFound", err)
	}
	if tb.hasEnv(f(11), "X=1") {
		t.Fatal("hasEnv is true on macOS")
	}
}

// failing is a kinfoSource that fails with err, or answers every read with
// the record of pid wrongPID.
type failing struct {
	err      error
	wrongPID int
}

func (s failing) all() ([]darwin.Kinfo, error) { return nil, s.err }

func (s failing) read(int) (darwin.Kinfo, error) {
	return darwin.Kinfo{PID: s.wrongPID, Start: t0}, s.err
}

func TestCaptureKinfo(t *testing.T) {
	k := kinfoFixture()
	root := kinfoRoot(k)
	// With a tag and the parent of R as host: nothing is adopted on macOS.
	stats, err := capture(kinfoTable{k}, root, false, adoption{host: f(0), tag: "TAG=1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{f(12), f(15), f(21), f(11), f(13), f(14), f(20)}
	if got := statPids(stats); !slices.Equal(got, want) {
		t.Fatalf("capture = %v\nwant      %v (deepest first; the session member that left, not 22, 30, 31 or 40)", got, want)
	}

	// RootReaped with the root gone: only its session's members.
	k = kinfoFixture()
	delete(k.recs, f(1))
	stats, err = capture(kinfoTable{k}, root, true, adoption{})
	if err != nil {
		t.Fatal(err)
	}
	want = []int{f(12), f(21), f(11), f(13), f(20)}
	if got := statPids(stats); !slices.Equal(got, want) {
		t.Fatalf("capture of a reaped root = %v; want %v", got, want)
	}
}

func TestTreeKinfo(t *testing.T) {
	k := kinfoFixture()
	root := kinfoRoot(k)
	k.ignoreTERM[f(12)] = true
	// Right after the capture scan, 14 exits and a process outside the
	// tree takes its pid in the same second: only the microseconds differ.
	old := k.get(f(14))
	k.afterList[1] = func(k *fakeKinfo) {
		k.set(darwin.Kinfo{PID: f(14), PPID: 1, PGID: f(14), SID: f(50), TDev: darwin.NoDev, Stat: darwin.SSLEEP, Start: old.Start.Add(time.Microsecond), Comm: "newcomer"})
	}
	rep, err := kinfoTree(context.Background(), root, k)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{f(12), f(15), f(21), f(11), f(20)}; !slices.Equal(rep.Killed, want) || len(rep.Survivors) != 0 || len(rep.Reaped) != 0 {
		t.Fatalf("report = %+v; want Killed %v", rep, want)
	}
	calls := k.calls()
	for _, c := range calls {
		if c.pid == f(14) || c.pid == f(13) || c.pid == root.PID {
			t.Errorf("signalled %d (%v): recycled, zombie or root", c.pid, c.sig)
		}
	}
	for _, want := range []sent{{f(11), syscall.SIGTERM}, {f(11), syscall.SIGCONT}, {f(12), syscall.SIGKILL}} {
		if !slices.Contains(calls, want) {
			t.Errorf("missing %v in %v", want, calls)
		}
	}
	if r := k.get(f(14)); !r.Alive() || r.Comm != "newcomer" {
		t.Errorf("the newcomer on pid %d was hurt: %+v", f(14), r)
	}
	for _, pid := range []int{f(11), f(12), f(15), f(20), f(21)} {
		if r := k.get(pid); r.Alive() {
			t.Errorf("member %d still running: %+v", pid, r)
		}
	}
}

func TestTreeKinfoRootRecycled(t *testing.T) {
	k := kinfoFixture()
	root := kinfoRoot(k)
	root.StartTime-- // the shell we started held the pid a microsecond earlier
	if _, err := kinfoTree(context.Background(), root, k); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Tree = %v; want ErrRootChanged", err)
	}
	if calls := k.calls(); len(calls) != 0 {
		t.Fatalf("signals from a recycled root: %v", calls)
	}
}
