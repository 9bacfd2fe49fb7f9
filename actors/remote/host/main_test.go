package host_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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

func TestMain(m *testing.M) {
	if script := os.Getenv(clientEnv); script != "" {
		helperClient(script) // a scripted client process (resume_test.go)
	}
	if os.Getenv(forgerEnv) != "" {
		helperForger() // a forger of host replies (forge_test.go)
	}
	restore := testkit.PrivateState()
	// goleak exits through its Cleanup: a deferred removal would never run.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		restore()
		testkit.RemoveBinaries()
		os.Exit(code)
	}))
}

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
	cmd.Env = append(os.Environ(), isolatedEnv+"=1", testkit.PtyhostBinEnv+"="+testkit.PtyhostBin(t))
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

// lockedBuffer collects a child's output (a scripted client's stderr, a
// client's log) for the test to read while it runs.
type lockedBuffer = testkit.LockedBuffer

// hostFlags are the flags every host of these tests runs with: full
// access, debug logs, and testkit.PTYConfig's timings.
func hostFlags() []string {
	return append([]string{"-sandbox", "danger-full-access", "-log-level", "debug"}, testkit.ConfigFlags(testkit.PTYConfig())...)
}

// startHost runs a loopback ptyhost (testkit.Loopback) with hostFlags and
// args; see testkit.StartHost.
func startHost(t *testing.T, args ...string) *testkit.Host {
	t.Helper()
	return startHostTLS(t, testkit.Loopback(args...)...)
}

// startHostTLS is startHost without the insecure loopback defaults.
func startHostTLS(t *testing.T, args ...string) *testkit.Host {
	t.Helper()
	return testkit.StartHost(t, append(hostFlags(), args...)...)
}

// newClient starts a client Service with the hosts registered as h0, h1,
// ... (insecure, loopback).
func newClient(t *testing.T, hosts ...*testkit.Host) (*actors.Service, messages.Owner) {
	t.Helper()
	return newClientWith(t, func(svc *actors.Service) error {
		for i, h := range hosts {
			if err := rc(svc).RegisterHost(testkit.Ctx(t), hostName(i), h.Addr(), nil, remote.HostInsecure()); err != nil {
				return err
			}
		}
		return nil
	})
}

// spawnOnHost is the setup most tests here begin with: a loopback host
// (startHost with args), a client with it registered as h0, and a session
// spawned there for the client's owner.
func spawnOnHost(t *testing.T, args ...string) (*testkit.Host, *actors.Service, messages.Owner, *actors.Session) {
	t.Helper()
	h := startHost(t, args...)
	svc, o := newClient(t, h)
	sh, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatalf("spawn: %v\nhost log:\n%s", err, h.Stderr())
	}
	return h, svc, o, sh
}

// newClientWith starts a client Service, registers its hosts with
// register, and opens an owner.
func newClientWith(t *testing.T, register func(*actors.Service) error) (*actors.Service, messages.Owner) {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Tolerate: []error{messages.ErrHostLost}})
	if err := register(svc); err != nil {
		t.Fatal(err)
	}
	return svc, testkit.Owner(t, svc, "test")
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

// tlsFiles reads "cert|key|ca", the files a test hands a child process
// in its environment: the key pair and a pool trusting the CA.
func tlsFiles(files string) (tls.Certificate, *x509.CertPool, error) {
	f := strings.Split(files, "|")
	if len(f) != 3 {
		return tls.Certificate{}, nil, fmt.Errorf("%q: want cert|key|ca", files)
	}
	pair, err := tls.LoadX509KeyPair(f[0], f[1])
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	caPEM, err := os.ReadFile(f[2])
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return tls.Certificate{}, nil, fmt.Errorf("no CA in %s", f[2])
	}
	return pair, pool, nil
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
