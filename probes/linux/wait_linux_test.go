//go:build linux

package linux

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptySession is a program started as the session leader of a fresh PTY,
// with that PTY as its controlling terminal.
type ptySession struct {
	tb    testing.TB
	ptmx  *os.File
	cmd   *exec.Cmd
	term  Terminal
	arch  Arch
	drain chan struct{} // closed when the output reader has returned
}

// startPTY starts cmd in a new session on a new PTY. stdin, when non-nil,
// replaces the PTY as the program's stdin (the PTY stays its controlling
// terminal through stdout). Cleanup kills the foreground group and the
// leader, reaps the leader and joins the output reader.
func startPTY(tb testing.TB, stdin *os.File, cmd *exec.Cmd) *ptySession {
	tb.Helper()
	arch := ArchFor(runtime.GOARCH)
	if arch == ArchUnsupported {
		tb.Skipf("no syscall table for %s", runtime.GOARCH)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		tb.Fatal(err)
	}
	defer tty.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	ctty := 0
	if stdin != nil {
		cmd.Stdin, ctty = stdin, 1
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "TERM=dumb", "NODE_REPL_HISTORY=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ctty}
	if err := cmd.Start(); err != nil {
		_ = ptmx.Close()
		tb.Fatal(err)
	}
	s := &ptySession{
		tb: tb, ptmx: ptmx, cmd: cmd, arch: arch,
		term:  Terminal{Paths: []string{tty.Name(), "/dev/tty"}},
		drain: make(chan struct{}),
	}
	go func() {
		defer close(s.drain)
		_, _ = io.Copy(io.Discard, ptmx)
	}()
	tb.Cleanup(s.stop)
	return s
}

func (s *ptySession) stop() {
	if pg, err := s.pgid(); err == nil && pg > 0 && pg != s.cmd.Process.Pid {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	_ = s.ptmx.Close()
	<-s.drain
}

// pgid is the terminal's foreground process group (TIOCGPGRP on the master).
func (s *ptySession) pgid() (int, error) {
	rc, err := s.ptmx.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pg int
	var ierr error
	if err := rc.Control(func(fd uintptr) { pg, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil {
		return 0, err
	}
	return pg, ierr
}

func (s *ptySession) probe() (GroupWait, error) {
	pg, err := s.pgid()
	if err != nil {
		return GroupWait{}, err
	}
	return ProbeGroup(FS{}, FS{}, s.arch, s.cmd.Process.Pid, pg, s.term)
}

// waitFor probes until ok accepts the result, failing after a deadline.
func (s *ptySession) waitFor(what string, ok func(GroupWait) bool) GroupWait {
	s.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last GroupWait
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = s.probe()
		if lastErr == nil && ok(last) {
			w, _ := last.Waiting()
			s.tb.Logf("%s: %d members, %d threads, waiting %+v", what, last.Members, len(last.Threads), w)
			return last
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.tb.Fatalf("%s: not seen in 10s; last probe %+v, %v", what, last, lastErr)
	return last
}

func (s *ptySession) write(in string) {
	s.tb.Helper()
	if _, err := io.WriteString(s.ptmx, in); err != nil {
		s.tb.Fatal(err)
	}
}

func waitingAs(comm string, calls ...WaitCall) func(GroupWait) bool {
	return func(g GroupWait) bool {
		w, ok := g.Waiting()
		return ok && w.Comm == comm && slices.Contains(calls, w.Call)
	}
}

func lookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return p
}

// notWaitingFor asserts that n probes in a row see no wait.
func (s *ptySession) notWaitingFor(n int) {
	s.tb.Helper()
	for range n {
		g, err := s.probe()
		if err != nil {
			s.tb.Fatal(err)
		}
		if w, ok := g.Waiting(); ok {
			s.tb.Fatalf("waiting: %+v in %+v", w, g)
		}
	}
}

func TestProbeRealPython(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "python3"), "-q"))
	g := s.waitFor("python3 at its prompt", waitingAs("python3", CallPselect6, CallSelect))
	first, _ := g.Waiting()
	if first.PID != s.cmd.Process.Pid || g.Members != 1 || first.Switches == 0 {
		t.Errorf("probe = %+v", g)
	}
	// Evaluating a line leaves the wait and enters a new one: the
	// context-switch count proves it.
	s.write("1+1\n")
	s.waitFor("python3 back at its prompt", func(g GroupWait) bool {
		w, ok := g.Waiting()
		return ok && w.Switches > first.Switches
	})
}

func TestProbeRealSleep(t *testing.T) {
	t.Parallel()
	// sleep outlives every probe below; the cleanup kills it.
	s := startPTY(t, nil, exec.Command(lookPath(t, "sleep"), "3600"))
	pid := s.cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := readSyscall(FS{}, taskPath(pid, pid))
		if err == nil && l.Nr == unix.SYS_CLOCK_NANOSLEEP {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep never reached clock_nanosleep: %+v, %v", l, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.notWaitingFor(50)
	if g, err := s.probe(); err != nil || g.Members != 1 || len(g.Threads) != 1 || g.Threads[0].Comm != "sleep" {
		t.Errorf("probe = %+v, %v", g, err)
	}
}

func TestProbeRealCatPipe(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Cleanup(func() { _ = w.Close() })
	s := startPTY(t, r, exec.Command(lookPath(t, "cat")))
	// cat blocks in read(0) on the pipe: a known wait call, not the terminal.
	s.waitFor("cat in read on the pipe", func(g GroupWait) bool {
		return len(g.Threads) == 1 && g.Threads[0].Comm == "cat" && g.Threads[0].Call == CallRead
	})
	s.notWaitingFor(50)
}

func TestProbeRealCatPTY(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "cat")))
	s.waitFor("cat reading the pts", waitingAs("cat", CallRead))
}

// TestProbeRealBashJob runs the shell the way the backend does: bash is the
// session leader, and its job, in a process group of its own, is found by
// walking the shell's children.
func TestProbeRealBashJob(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "bash"), "--norc", "--noprofile", "-i"))
	s.waitFor("bash at its prompt", waitingAs("bash", CallPselect6, CallSelect, CallRead))
	s.write("cat\n")
	g := s.waitFor("cat in the foreground", waitingAs("cat", CallRead))
	w, _ := g.Waiting()
	if g.Pgid == s.cmd.Process.Pid || w.PID != g.Pgid || g.Members != 1 {
		t.Errorf("probe = %+v", g)
	}
}

func TestProbeRealThreadReads(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "python3"), "-c",
		"import sys, threading; t = threading.Thread(target=sys.stdin.readline); t.start(); t.join()"))
	g := s.waitFor("python3 thread reading stdin", waitingAs("python3", CallRead))
	if w, _ := g.Waiting(); w.TID == w.PID || len(g.Threads) != 2 {
		t.Errorf("probe = %+v", g)
	}
}

func TestProbeRealEpollPwait2(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=epoll_pwait2")
	s := startPTY(t, nil, cmd)
	g := s.waitFor("helper in epoll_pwait2", func(g GroupWait) bool {
		w, ok := g.Waiting()
		return ok && w.Call == CallEpollPwait2
	})
	if n := countWaiting(g); n != 1 {
		t.Errorf("%d threads waiting; want 1 in %+v", n, g)
	}
}

func TestProbeRealLess(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "less"), "wait.go"))
	g := s.waitFor("less reading the terminal", waitingAs("less", CallRead))
	w, _ := g.Waiting()
	if w.Args[0] == 0 {
		t.Errorf("less reads fd 0, not its own tty fd: %+v", w)
	}
}

func TestProbeRealNode(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "node")))
	g := s.waitFor("node REPL", waitingAs("node", CallEpollWait, CallEpollPwait, CallEpollPwait2))
	if len(g.Threads) < 2 || countWaiting(g) != 1 {
		t.Errorf("probe = %+v", g)
	}
}

func TestReadMemReal(t *testing.T) {
	b := []byte("probe me")
	addr := uint64(uintptr(unsafe.Pointer(&b[0])))
	got, err := FS{}.ReadMem(os.Getpid(), addr, len(b))
	runtime.KeepAlive(b)
	if err != nil || string(got) != "probe me" {
		t.Fatalf("ReadMem = %q, %v", got, err)
	}
	if _, err := (FS{}).ReadMem(os.Getpid(), 0, 8); err == nil {
		t.Error("ReadMem at address 0 succeeded")
	}
	if _, err := (FS{}).ReadMem(1<<23, addr, 8); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadMem of a missing pid = %v; want ErrNotFound", err)
	}
	if _, err := (FS{}).ReadMem(os.Getpid(), 1<<63, 8); !errors.Is(err, errBadRange) {
		t.Errorf("ReadMem beyond int64 = %v; want errBadRange", err)
	}
}

// BenchmarkProbeGroup probes an idle python3 REPL: one process, one thread
// in pselect6 (status, syscall, fd link, mem, syscall, status), plus its
// stat, task list and children.
func BenchmarkProbeGroup(b *testing.B) {
	s := startPTY(b, nil, exec.Command(lookPath(b, "python3"), "-q"))
	s.waitFor("python3 at its prompt", waitingAs("python3", CallPselect6, CallSelect))
	pg, err := s.pgid()
	if err != nil {
		b.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		g, err := ProbeGroup(FS{}, FS{}, s.arch, pid, pg, s.term)
		times = append(times, time.Since(start))
		if _, ok := g.Waiting(); err != nil || !ok {
			b.Fatalf("probe = %+v, %v", g, err)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "µs-median")
	b.ReportMetric(float64(times[len(times)*9/10].Nanoseconds())/1e3, "µs-p90")
}

// ExampleProbeGroup shows the call the backend makes.
func ExampleProbeGroup() {
	// The shell's pid and the terminal's foreground group, e.g. from
	// TIOCGPGRP on the PTY master.
	shell, pgid := os.Getpid(), syscall.Getpgrp()
	term := Terminal{Paths: []string{"/dev/pts/3", "/dev/tty"}}
	g, err := ProbeGroup(FS{}, FS{}, ArchFor(runtime.GOARCH), shell, pgid, term)
	if err != nil {
		fmt.Println(err)
		return
	}
	if w, ok := g.Waiting(); ok {
		fmt.Printf("%s waits in %v on thread %d\n", w.Comm, w.Call, w.TID)
	}
}
