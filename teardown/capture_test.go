package teardown

import (
	"errors"
	"slices"
	"testing"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// Fake tree (pids are fakeBase+n; R is the root shell, session R):
//
//	R ─ 11 ─ 12 ─ 13            descendants
//	  ─ 14
//	  ─ 15 (setsid) ─ 16        a descendant that left the session
//	1 ─ 20 (session R) ─ 21     double-forked away, still in R's session
//	  ─ 22 (session R)          background job re-parented to init
//	  ─ 30 (session 30) ─ 31    unrelated session
//	runtime ─ 40 (session 40)   a sibling of R
func f(n int) int { return fakeBase + n }

func captureFixture() *fakeProc {
	R := f(1)
	return newFakeProc(
		linux.Stat{PID: 1, Session: 1, PGRP: 1, State: 'S', StartTime: 1, Comm: "init"},
		proc(f(0), 1, f(0), 50),
		proc(R, f(0), R, 100),
		proc(f(11), R, R, 111),
		proc(f(12), f(11), R, 112),
		proc(f(13), f(12), R, 113),
		proc(f(14), R, R, 114),
		proc(f(15), R, f(15), 115),
		proc(f(16), f(15), f(15), 116),
		proc(f(20), 1, R, 120),
		proc(f(21), f(20), R, 121),
		proc(f(22), 1, R, 122),
		proc(f(30), 1, f(30), 130),
		proc(f(31), f(30), f(30), 131),
		proc(f(40), f(0), f(40), 140),
	)
}

func rootOf(p *fakeProc) linux.Identity {
	s, _ := p.get(f(1))
	return s.Identity()
}

func pidsOf(ids []linux.Identity) []int {
	var out []int
	for _, id := range ids {
		out = append(out, id.PID)
	}
	return out
}

func statPids(stats []linux.Stat) []int {
	var out []int
	for _, s := range stats {
		out = append(out, s.PID)
	}
	return out
}

func TestCapture(t *testing.T) {
	p := captureFixture()
	ids, err := Capture(p, rootOf(p))
	if err != nil {
		t.Fatal(err)
	}
	// Deepest first; within a depth, the order the walk found them.
	want := []int{f(13), f(12), f(16), f(21), f(11), f(14), f(15), f(20), f(22)}
	if got := pidsOf(ids); !slices.Equal(got, want) {
		t.Fatalf("Capture = %v, want %v", got, want)
	}
	for _, id := range ids {
		s, _ := p.get(id.PID)
		if id != s.Identity() {
			t.Errorf("identity %+v, want %+v", id, s.Identity())
		}
	}
}

func TestDescendants(t *testing.T) {
	p := captureFixture()
	stats, err := linux.ListStats(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{f(13), f(12), f(16), f(11), f(14), f(15)}
	if got := statPids(Descendants(stats, f(1))); !slices.Equal(got, want) {
		t.Fatalf("Descendants = %v, want %v", got, want)
	}
	if got := Descendants(stats, f(99)); len(got) != 0 {
		t.Fatalf("Descendants(absent) = %v", got)
	}
}

func TestCaptureZombieRoot(t *testing.T) {
	// A root that exited but is not reaped yet still owns its identity, so
	// its session members are still adopted.
	p := captureFixture()
	root, _ := p.get(f(1))
	root.State = 'Z'
	p.set(root)
	ids, err := Capture(p, root.Identity())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 9 {
		t.Fatalf("Capture = %v, want 9 members", pidsOf(ids))
	}
}

func TestCaptureRootChanged(t *testing.T) {
	t.Run("recycled", func(t *testing.T) {
		p := captureFixture()
		root := rootOf(p)
		root.StartTime-- // we captured an older process that had this pid
		ids, err := Capture(p, root)
		if !errors.Is(err, ErrRootChanged) || ids != nil {
			t.Fatalf("Capture = %v, %v; want nil, ErrRootChanged", ids, err)
		}
	})
	t.Run("exited", func(t *testing.T) {
		p := captureFixture()
		root := rootOf(p)
		p.remove(root.PID)
		ids, err := Capture(p, root)
		if !errors.Is(err, ErrRootChanged) || ids != nil {
			t.Fatalf("Capture = %v, %v; want nil, ErrRootChanged", ids, err)
		}
	})
	t.Run("recycled during the scan", func(t *testing.T) {
		p := captureFixture()
		root := rootOf(p)
		// The scan reads the root's entry first; then it is reaped and its
		// pid reused before the scan ends.
		p.after(root.PID, 1, func(p *fakeProc) { p.set(proc(f(1), 1, f(1), 999)) })
		if ids, err := Capture(p, root); !errors.Is(err, ErrRootChanged) || ids != nil {
			t.Fatalf("Capture = %v, %v; want nil, ErrRootChanged", ids, err)
		}
	})
}

func TestCaptureInvalidRoot(t *testing.T) {
	p := captureFixture()
	for _, pid := range []int{-1, 0, 1} {
		if _, err := Capture(p, linux.Identity{PID: pid, StartTime: 1}); !errors.Is(err, ErrInvalidPID) {
			t.Errorf("Capture(pid %d) = %v; want ErrInvalidPID", pid, err)
		}
	}
}
