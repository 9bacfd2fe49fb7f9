package linux

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// recheckUntil rechecks until ok accepts the answer, failing after a
// deadline.
func recheckUntil(t *testing.T, f *Follower, pgid int, what string, ok func(ThreadWait, bool) bool) ThreadWait {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tw, waiting := f.Recheck(pgid)
		if ok(tw, waiting) {
			return tw
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in 10s; last %+v %v", what, tw, waiting)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestFollowerFollowsPythonThroughALine(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "python3"), "-q"))
	g := s.waitFor("python3 at its prompt", waitingAs("python3", CallPselect6, CallSelect))
	w, _ := g.Waiting()
	f := NewFollower(s.arch, s.term)
	defer f.Close()
	if _, ok := f.Recheck(g.Pgid); ok {
		t.Fatal("an empty follower proved a wait")
	}
	f.Track(w)
	first := recheckUntil(t, f, g.Pgid, "the followed wait", func(_ ThreadWait, ok bool) bool { return ok })
	if first.PID != w.PID || first.TID != w.TID || first.Comm != "python3" || first.Call != w.Call || first.Switches == 0 {
		t.Fatalf("recheck = %+v, tracked %+v", first, w)
	}
	if _, ok := f.Recheck(g.Pgid + 1); ok {
		t.Fatal("a wait proved for another process group")
	}
	// While python sleeps it is not waiting on the terminal; back at its
	// prompt the same thread waits again, having run in between. It sleeps
	// until the test interrupts it, so the sleep cannot end unobserved.
	s.write("import time; time.sleep(3600)\n")
	recheckUntil(t, f, g.Pgid, "python asleep", func(tw ThreadWait, ok bool) bool {
		if ok || tw.Call != CallNone {
			return false
		}
		l, err := readSyscall(FS{}, taskPath(w.PID, w.TID))
		return err == nil && l.Nr == unix.SYS_CLOCK_NANOSLEEP
	})
	// SIGINT raises KeyboardInterrupt out of the sleep, back to the prompt.
	if err := syscall.Kill(w.PID, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	again := recheckUntil(t, f, g.Pgid, "python back at its prompt", func(_ ThreadWait, ok bool) bool { return ok })
	if again.Switches <= first.Switches {
		t.Fatalf("switch count %d after a line, %d before", again.Switches, first.Switches)
	}
	// Stopped by job control it proves nothing.
	if err := syscall.Kill(w.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	recheckUntil(t, f, g.Pgid, "python stopped", func(_ ThreadWait, ok bool) bool { return !ok })
	if err := syscall.Kill(w.PID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	recheckUntil(t, f, g.Pgid, "python continued", func(_ ThreadWait, ok bool) bool { return ok })
	// Gone, its held files answer for nobody, whatever reuses its pid.
	s.stop()
	if _, ok := f.Recheck(g.Pgid); ok {
		t.Fatal("a reaped process proved a wait")
	}
}

func TestFollowerTracksOnlyNonEpollWaits(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "cat")))
	g := s.waitFor("cat reading", waitingAs("cat", CallRead))
	w, _ := g.Waiting()
	f := NewFollower(s.arch, s.term)
	defer f.Close()
	for _, bad := range []ThreadWait{
		{PID: w.PID, TID: w.TID, Call: CallRead},                     // not waiting
		{PID: w.PID, TID: w.TID, Call: CallEpollWait, Waiting: true}, // an event loop
		{PID: 1 << 30, TID: 1 << 30, Call: CallRead, Waiting: true},  // no such process
	} {
		f.Track(bad)
		if tw, ok := f.Recheck(g.Pgid); ok {
			t.Errorf("tracking %+v proved %+v", bad, tw)
		}
	}
	f.Track(w)
	if tw, ok := f.Recheck(g.Pgid); !ok || tw.Call != CallRead || tw.Comm != "cat" {
		t.Fatalf("recheck of cat = %+v %v", tw, ok)
	}
	// A line makes cat run and read again: still proven, by the same thread.
	s.write("x\n")
	recheckUntil(t, f, g.Pgid, "cat reading again", func(tw ThreadWait, ok bool) bool { return ok && tw.TID == w.TID })
	f.Close()
	if _, ok := f.Recheck(g.Pgid); ok {
		t.Fatal("a closed follower proved a wait")
	}
}

// BenchmarkFollowerRecheck is BenchmarkProbeGroup's question answered from
// the held files of the thread a walk found.
func BenchmarkFollowerRecheck(b *testing.B) {
	s := startPTY(b, nil, exec.Command(lookPath(b, "python3"), "-q"))
	g := s.waitFor("python3 at its prompt", waitingAs("python3", CallPselect6, CallSelect))
	w, _ := g.Waiting()
	f := NewFollower(s.arch, s.term)
	defer f.Close()
	f.Track(w)
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		_, ok := f.Recheck(g.Pgid)
		times = append(times, time.Since(start))
		if !ok {
			b.Fatal("the followed wait was not proven")
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "µs-median")
	b.ReportMetric(float64(times[len(times)*9/10].Nanoseconds())/1e3, "µs-p90")
}
