package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
)

// idleBudget is the bound on what one idle session may cost the
// host process (its own memory, not the shell's).
const idleBudget = 100 << 10

// fdsPerSession bounds the descriptors one session holds in the host: the
// PTY master, the probe's own handle on the pts, the exact tier's held
// /proc files of a followed waiter, and a pidfd during teardown.
const fdsPerSession = 8

// hostMem is the host process's own memory: the Go heap in use, the
// goroutine stacks in use (which include each OS thread's g0 and signal
// stacks), and the resident set; and its OS threads.
type hostMem struct {
	heap, stack, rss int64
	threads          int64
}

// readHostMem collects garbage first, twice (the first cycle may leave
// finalizer-held objects for the second), so only live memory is counted.
func readHostMem(tb testing.TB) hostMem {
	tb.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return hostMem{heap: int64(ms.HeapInuse), stack: int64(ms.StackInuse), rss: statusKB(tb, "VmRSS:"), threads: statusValue(tb, "Threads:")}
}

// raiseNoFile lifts the soft descriptor limit to at least need (up to the
// hard limit), so n sessions fit; it fails if the hard limit is too low.
func raiseNoFile(tb testing.TB, need uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		tb.Fatalf("RLIMIT_NOFILE hard limit %d is below the %d descriptors needed", lim.Max, need)
	}
	old := lim.Cur
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		lim.Cur = old
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	})
}

// checkPTYLimit fails early when the kernel cannot hand out n more PTYs.
func checkPTYLimit(tb testing.TB, n int) {
	tb.Helper()
	read := func(name string) int {
		b, err := os.ReadFile("/proc/sys/kernel/pty/" + name)
		if err != nil {
			tb.Fatalf("read pty %s: %v", name, err)
		}
		v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return v
	}
	if max, nr := read("max"), read("nr"); max-nr < n {
		tb.Fatalf("kernel.pty.max %d with %d in use leaves no room for %d sessions", max, nr, n)
	}
}

// openSessions spawns n sessions, a few at a time (spawning is mostly
// the shells' own start-up, which two cores run no faster in bulk), and
// returns them once every one is ready.
func openSessions(tb testing.TB, svc *actors.Service, o messages.Owner, n int) []*actors.Session {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := make([]*actors.Session, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = svc.Spawn(ctx, o, messages.SpawnRequest{})
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tb.Fatalf("spawn %d of %d: %v", i, n, err)
		}
	}
	return out
}

// waitIdle waits until every session's startup has wound down: the
// goroutine count stops at base plus at most perSession per session.
// Besides settling the start-up, this is an assertion: an idle session
// may hold only its pump and its reaper.
func waitIdle(tb testing.TB, base, n, perSession int) int {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= base+perSession*n {
			return g
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d goroutines with %d idle sessions (base %d): more than %d per session", g, n, base, perSession)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cpuTicks is the process's user+system CPU time in clock ticks
// (/proc/<pid>/stat fields 14 and 15), its children excluded.
func cpuTicks(tb testing.TB, pid string) int64 {
	tb.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the comm, which may hold spaces: state is field 3.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// TestIdleSessionCost opens idle sessions and checks what each costs the
// host: at most two goroutines (the output pump and the reaper, both
// parked in the runtime poller), no OS thread of its own, under idleBudget
// of Go memory, and no CPU. A goroutine blocked in a system call (a plain
// exec.Cmd.Wait is one) holds a thread for the session's whole life; the
// runtime never gives threads back, so this check is only meaningful in a
// binary where no earlier test left idle threads behind (here, none does).
//
// Memory is the Go heap plus goroutine stacks in use after a full GC:
// deterministic to a few KiB per session, and it counts every byte the
// host keeps for a session whether or not the kernel has faulted its pages
// in. RSS is logged but not asserted: it moves in pages as the kernel
// faults them and the scavenger returns them, and fresh zeroed heap pages
// (a read buffer only ever touched at its front) do not count until
// written, so it would under-report a buffer the heap measure sees.
func TestIdleSessionCost(t *testing.T) {
	const n = 50
	checkPTYLimit(t, n)
	raiseNoFile(t, n*fdsPerSession+256)
	svc, o := newService(t, messages.DefaultConfig())
	goBase := runtime.NumGoroutine()
	before := readHostMem(t)
	sessions := openSessions(t, svc, o, n)
	waitIdle(t, goBase, n, 2)
	after := readHostMem(t)

	heap := (after.heap - before.heap) / n
	stack := (after.stack - before.stack) / n
	rss := (after.rss - before.rss) / n
	t.Logf("per idle session: heap %d B, stacks %d B, heap+stacks %d B, RSS %d B (budget %d B); %d more OS threads for %d sessions",
		heap, stack, heap+stack, rss, idleBudget, after.threads-before.threads, n)
	if d := after.threads - before.threads; d >= n/4 {
		t.Errorf("%d idle sessions added %d OS threads to the host: a session blocks a thread", n, d)
	}
	if heap+stack >= idleBudget {
		t.Errorf("an idle session costs the host %d B of heap and stacks, over the %d B budget", heap+stack, idleBudget)
	}

	// A goroutine that spins, polls or ticks shows up as CPU time of the
	// host, or of the shells if something keeps writing to them. One
	// spinning goroutine burns ~100 ticks a second; the bound allows for
	// the runtime's own background work on a shared machine.
	shells := make([]string, n)
	for i, s := range sessions {
		shells[i] = strconv.Itoa(s.PID())
	}
	shellTicks := func() (sum int64) {
		for _, p := range shells {
			sum += cpuTicks(t, p)
		}
		return sum
	}
	host0, sh0 := cpuTicks(t, "self"), shellTicks()
	window := time.Second
	time.Sleep(window) // the measurement window itself, not a wait for anything
	host, sh := cpuTicks(t, "self")-host0, shellTicks()-sh0
	t.Logf("CPU over %s with %d idle sessions: host %d ticks, shells %d ticks", window, n, host, sh)
	if host > 20 {
		t.Errorf("the host used %d ticks of CPU in %s with only idle sessions: something spins", host, window)
	}
	if sh > 5 {
		t.Errorf("%d idle shells used %d ticks of CPU in %s: something keeps waking them", n, sh, window)
	}
}

// BenchmarkConcurrentSessions opens 500 sessions first, then has all of
// them send `echo` at once, every iteration. It reports the send latency
// percentiles over every send of every iteration, and what an idle session
// costs the host process (its shell excluded): host-B/session is the
// resident set, heap-B/session the Go heap in use, stack-B/session the
// goroutine stacks, each measured before spawning and once all sessions
// are idle, divided by the number of sessions.
func BenchmarkConcurrentSessions(b *testing.B) {
	const n = 500
	checkPTYLimit(b, n)
	raiseNoFile(b, n*fdsPerSession+256)
	svc, o := newService(b, messages.DefaultConfig())
	goBase := runtime.NumGoroutine()
	before := readHostMem(b)
	t0 := time.Now()
	sessions := openSessions(b, svc, o, n)
	b.Logf("spawned %d sessions in %s", n, time.Since(t0).Round(time.Millisecond))
	waitIdle(b, goBase, n, 2)
	after := readHostMem(b)
	b.Logf("host before spawning: heap %d B, stacks %d B, RSS %d B, %d threads; with %d idle sessions: heap %d B, stacks %d B, RSS %d B, %d threads",
		before.heap, before.stack, before.rss, before.threads, n, after.heap, after.stack, after.rss, after.threads)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var samples []time.Duration
	round := 0
	for b.Loop() {
		round++
		lat := make([]time.Duration, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, sp := range sessions {
			token := fmt.Sprintf("scale-%d-%d", round, i)
			wg.Go(func() {
				<-start
				t0 := time.Now()
				res, err := sp.Send(ctx, messages.SendRequest{Text: "echo " + token, Submit: true})
				lat[i] = time.Since(t0)
				switch {
				case err != nil:
					errs[i] = err
				case res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0:
					errs[i] = fmt.Errorf("settled as %s exit %v", res.WaitReason, res.ExitCode)
				case !strings.Contains(res.Viewport, token+"\n"):
					errs[i] = fmt.Errorf("viewport %q lacks %s", res.Viewport, token)
				}
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				b.Fatalf("round %d, session %d: %v", round, i, err)
			}
		}
		samples = append(samples, lat...)
	}
	// Reported after the loop: b.Loop's first call resets user metrics.
	b.ReportMetric(float64(after.rss-before.rss)/n, "host-B/session")
	b.ReportMetric(float64(after.heap-before.heap)/n, "heap-B/session")
	b.ReportMetric(float64(after.stack-before.stack)/n, "stack-B/session")
	slices.Sort(samples)
	b.ReportMetric(ms(samples[len(samples)/2]), "p50-ms")
	b.ReportMetric(ms(samples[(len(samples)*99+99)/100-1]), "p99-ms")
}
