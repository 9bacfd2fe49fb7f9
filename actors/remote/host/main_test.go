package host_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"go.uber.org/goleak"
)

// The end-to-end tests of remote hosts: a real ptyhost process (built once
// per run, without -race: the pinned protoactor's own races in
// Remote.Shutdown and grpclog.SetLoggerV2 stay out of the race detector's
// sight, since every host runs in its own process) and a client Service in
// this process talking to it over loopback.

var (
	binDir  string
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	if script := os.Getenv(clientEnv); script != "" {
		helperClient(script) // a scripted client process (resume_test.go)
	}
	if os.Getenv(forgerEnv) != "" {
		helperForger() // a forger of host replies (forge_test.go)
	}
	var err error
	if binDir, err = os.MkdirTemp("", "ptyhost-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 0
	func() {
		defer os.RemoveAll(binDir)
		goleak.VerifyTestMain(exitCode{m, &code})
	}()
	os.Exit(code)
}

// exitCode lets TestMain clean up after goleak.VerifyTestMain, which exits.
type exitCode struct {
	m    *testing.M
	code *int
}

func (e exitCode) Run() int { *e.code = e.m.Run(); return *e.code }

// isolatedEnv marks a child process running one test (see isolate).
const isolatedEnv = "PTYACTOR_HOST_TEST_ISOLATED"

// isolate runs the calling test in a child process of this test binary when
// the race detector is on, and reports whether the caller is the parent
// (whose test is then done: the child's verdict is its own). The pinned
// protoactor-go's remote.Start writes grpclog's global logger
// (grpclog.SetLoggerV2) while gRPC goroutines of an earlier endpoint in the
// same process may have read it, which the race detector reports; one
// client endpoint per process keeps the library's race out of -race runs.
// ptyactor's own code runs under the detector in the child all the same.
func isolate(t *testing.T) (parent bool) {
	t.Helper()
	if !raceEnabled || os.Getenv(isolatedEnv) != "" {
		return false
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexpQuote(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(run, "/"), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), isolatedEnv+"=1", "PTYHOST_BIN="+ptyhostBin(t))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("isolated run failed (%v):\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, ".go:") && !strings.HasPrefix(strings.TrimSpace(l), "{") {
			t.Log("child: " + strings.TrimSpace(l))
		}
	}
	return true
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ptyhostBin builds cmd/ptyhost once per run (a child of isolate reuses
// its parent's).
func ptyhostBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PTYHOST_BIN"); p != "" {
		return p
	}
	binOnce.Do(func() {
		binPath = filepath.Join(binDir, "ptyhost")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/ptyactor/ptyactor/cmd/ptyhost").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ptyhost: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// hostProc is a running ptyhost child.
type hostProc struct {
	cmd    *exec.Cmd
	addr   string
	stderr *lockedBuffer
	done   chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hostFlags are testkit.PTYConfig's timings as ptyhost flags.
func hostFlags() []string {
	c := testkit.PTYConfig()
	return []string{
		"-sandbox", "danger-full-access", "-log-level", "debug",
		fmt.Sprint("-idle-silence-ms=", c.IdleSilenceMs), fmt.Sprint("-timeout-ms=", c.TimeoutMs),
		fmt.Sprint("-poll-interval-ms=", c.PollIntervalMs), fmt.Sprint("-dispose-grace-ms=", c.DisposeGraceMs),
		fmt.Sprint("-handoff-grace-ms=", c.HandoffGraceMs), fmt.Sprint("-max-read-bytes=", c.MaxReadBytes),
	}
}

// startHost runs ptyhost with args and waits until it serves. Cleanup ends
// it (SIGCONT first, for a stopped one; SIGTERM, which closes its sessions;
// SIGKILL after a bound) and waits for it: no process outlives the test.
func startHost(t *testing.T, args ...string) *hostProc {
	t.Helper()
	return startHostTLS(t, append([]string{"-listen", "127.0.0.1:0", "-insecure"}, args...)...)
}

// startHostTLS is startHost without the insecure loopback defaults.
func startHostTLS(t *testing.T, args ...string) *hostProc {
	t.Helper()
	cmd := exec.Command(ptyhostBin(t), append(hostFlags(), args...)...)
	h := &hostProc{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = h.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ptyhost listening on "); ok {
				addrCh <- a
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(h.done)
	}()
	t.Cleanup(func() { h.stop(t) })
	select {
	case h.addr = <-addrCh:
	case <-h.done:
		t.Fatalf("ptyhost exited before serving: %s", h.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("ptyhost did not serve within 30s: %s", h.stderr)
	}
	return h
}

func (h *hostProc) stop(t *testing.T) {
	select {
	case <-h.done:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGCONT)
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		t.Errorf("ptyhost ignored SIGTERM for 15s; killing it. Its log:\n%s", h.stderr)
		_ = h.cmd.Process.Kill()
		<-h.done
	}
}

// kill9 kills the host at once.
func (h *hostProc) kill9(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-h.done
}

// newClient starts a client Service with the hosts registered as h0, h1,
// ... (insecure, loopback).
func newClient(t *testing.T, hosts ...*hostProc) (*actors.Service, messages.Owner) {
	t.Helper()
	return newClientWith(t, func(svc *actors.Service) error {
		for i, h := range hosts {
			if err := rc(svc).RegisterHost(testkit.Ctx(t), hostName(i), h.addr, nil, remote.HostInsecure()); err != nil {
				return err
			}
		}
		return nil
	})
}

// newClientWith starts a client Service, registers its hosts with
// register, and opens an owner.
func newClientWith(t *testing.T, register func(*actors.Service) error) (*actors.Service, messages.Owner) {
	t.Helper()
	svc, err := actors.NewService(actors.Options{Config: testkit.PTYConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil && !errors.Is(err, messages.ErrHostLost) {
			t.Errorf("client shutdown: %v", err)
		}
	})
	if err := register(svc); err != nil {
		t.Fatal(err)
	}
	o, err := svc.NewOwner(testkit.Ctx(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	return svc, o
}

func hostName(i int) string { return fmt.Sprintf("h%d", i) }

// fifoGate makes a FIFO that a command on the host waits on
// (`read _ < path`, path already shell-quoted) until the test calls
// release: a phase that lasts exactly until the test has seen what it
// waits for, whatever the load. The test holds the FIFO open read-write
// (on Linux that open never blocks), so the command's open does not block
// either and its read waits for release's line; the test's close at
// cleanup ends the read (EOF) of a command still waiting.
func fifoGate(t *testing.T) (path string, release func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gate")
	if strings.Contains(p, "'") {
		t.Fatalf("gate path %q cannot be single-quoted", p)
	}
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return "'" + p + "'", func() {
		t.Helper()
		if _, err := f.WriteString("go\n"); err != nil {
			t.Fatalf("release the gate: %v", err)
		}
	}
}

// rc is svc's remote client, attached on first use (from the test's own
// goroutine).
func rc(svc *actors.Service) *remote.Client {
	if c := remote.Get(svc); c != nil {
		return c
	}
	c, err := remote.Attach(svc)
	if err != nil {
		panic(err)
	}
	return c
}
