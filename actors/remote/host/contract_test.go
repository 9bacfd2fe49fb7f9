package host_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// The facade's contract through a real host: the python REPL's exact
// readiness, a real SIGINT, a background task, and owners kept apart.
func TestRemoteContract(t *testing.T) {
	if isolate(t) {
		return
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	h := startHost(t)
	svc, o := newClient(t, h)
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: messages.AnyHost, Name: "repl"})
	if err != nil {
		t.Fatal(err)
	}

	// Readiness is decided on the host, by the kernel: python waits.
	res, err := sh.Send(ctx, messages.SendRequest{Text: "python3 -q", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.Reader != "python3" || !strings.HasSuffix(res.Viewport, ">>> ") {
		t.Fatalf("python3: %+v %v", res, err)
	}
	res, err = sh.Send(ctx, messages.SendRequest{Text: "6*7", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "42") {
		t.Fatalf("6*7: %+v %v", res, err)
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "exit()", Submit: true}); err != nil {
		t.Fatal(err)
	}

	// A real SIGINT ends a foreground sleep; the marker reports 130.
	// The job itself says it runs, so it is the foreground group by then.
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "sh -c 'echo start''ed; exec sleep 30'", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	testkit.WaitFor(t, 5*time.Second, "the command to start", func() bool {
		d, err := op.ReadOutput(ctx)
		seen.WriteString(d.Delta)
		return err != nil || strings.Contains(seen.String(), "started")
	})
	if r, err := sh.Signal(ctx, messages.SIGINT); err != nil || !r.Delivered || r.TargetPgid == sh.PID() {
		t.Fatalf("SIGINT: %+v %v", r, err)
	}
	res, err = op.Result(ctx)
	if err != nil || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("after SIGINT: %+v %v", res, err)
	}

	// Background send: the tasks layer works unchanged on a remote session.
	id, err := svc.StartTask(ctx, o, messages.TaskRequest{Session: sh.ID(), Send: messages.SendRequest{Text: "echo task-$((6*7))", Submit: true}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := svc.TaskOutput(ctx, o, id, 5*time.Second)
	if err != nil || out.Task.Status != messages.TaskCompleted || !strings.Contains(out.Text, "task-42") {
		t.Fatalf("task: %+v %v", out, err)
	}

	// Scrollback comes from the host, paged as locally.
	count := 5
	page, err := sh.Read(ctx, messages.ReadRequest{Count: &count})
	if err != nil || !strings.Contains(page.Text, "task-42") {
		t.Fatalf("read: %+v %v", page, err)
	}
	if _, err := sh.Read(ctx, messages.ReadRequest{Count: new(int)}); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("read count 0: %v", err)
	}

	// What the send path reports locally crosses the wire too: typed
	// lines, causes, cursors and cursor reads, waits, receipts.
	res, err = sh.Send(ctx, messages.SendRequest{Text: "python3 -c 'print(\"got\", input())'\nhello", Submit: true})
	if err != nil || res.Cause != messages.CausePrompt || !strings.Contains(res.Viewport, "got hello") {
		t.Fatalf("typed lines: %+v %v", res, err)
	}
	cursor := res.Cursor
	// The command stays silent until the test opens its gate, after the
	// send settled on silence: no timed phase that load could cut short.
	gate, release := fifoGate(t)
	res, err = sh.Send(ctx, messages.SendRequest{Text: "echo late; read _ < " + gate + "; echo done", Submit: true, Wait: messages.WaitPolicy{Silence: 100 * time.Millisecond}})
	if err != nil || res.Cause != messages.CauseSilence {
		t.Fatalf("silence: %+v %v", res, err)
	}
	release()
	res, err = sh.Wait(ctx, messages.WaitPolicy{NoSilence: true})
	if err != nil || res.Cause != messages.CausePrompt || !strings.Contains(res.Viewport, "done") {
		t.Fatalf("wait: %+v %v", res, err)
	}
	page, err = sh.Read(ctx, messages.ReadRequest{Cursor: &cursor})
	if err != nil || !strings.Contains(page.Text, "late\n") || page.Cursor < cursor {
		t.Fatalf("cursor read: %+v %v", page, err)
	}
	res, err = sh.Send(ctx, messages.SendRequest{Text: "echo keyed", Keys: []string{"Enter"}, Screen: true})
	if err != nil || res.Cause != messages.CausePrompt || !strings.Contains(res.Viewport, "keyed") || res.Screen == nil || res.Screen.Height == 0 {
		t.Fatalf("keys and screen: %+v %v", res, err)
	}
	res, err = sh.Send(ctx, messages.SendRequest{Text: "sleep 60 &", Submit: true})
	if err != nil || len(res.Running) != 1 || res.Running[0].Command != "sleep" {
		t.Fatalf("receipt: %+v %v", res, err)
	}

	// Another owner: its own host-side owner and token; this session is
	// unknown to it, as on one machine.
	other, err := svc.NewOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spawn(ctx, other, messages.SpawnRequest{Host: "h0", Name: "repl"}); err != nil {
		t.Fatalf("the same name for another owner: %v", err)
	}
	if _, err := svc.Session(other, sh.ID()).Send(ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("another owner's id: %v", err)
	}
	if l, _ := svc.List(ctx, other); len(l) != 1 || l[0].SessionID == sh.ID() {
		t.Fatalf("other's list %v", l)
	}
	if _, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "nope"}); !errors.Is(err, messages.ErrNoHost) {
		t.Fatalf("unknown host: %v", err)
	}

	// Disposing the owner closes its remote sessions, with no survivor.
	pid := sh.PID()
	if err := svc.DisposeOwner(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("shell %d survived its owner's disposal (%v)", pid, err)
	}
}

// tlsHost starts a host with mutual TLS and returns it with the test CA
// and a client certificate it signed.
func tlsHost(t *testing.T) (*testkit.Host, *testCA, issued) {
	t.Helper()
	dir := t.TempDir()
	ca := newCA(t, "ptyactor test CA")
	hostCert := ca.issue(t, dir, "host")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHostTLS(t, "-listen", "127.0.0.1:0", "-tls-cert", hostCert.certFile, "-tls-key", hostCert.keyFile, "-tls-ca", caFile)
	return h, ca, ca.issue(t, dir, "client")
}

// A host with mutual TLS serves a client whose certificate its CA signed
// (and dials it back over TLS), and refuses a client without a
// certificate in the handshake, before any message.
func TestMutualTLS(t *testing.T) {
	if isolate(t) {
		return
	}
	h, ca, clientCert := tlsHost(t)
	conn, err := tls.Dial("tcp", h.Addr(), &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12})
	if err == nil {
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		t.Fatal("a client without a certificate was served")
	}

	good := &tls.Config{Certificates: []tls.Certificate{clientCert.pair}, RootCAs: ca.pool}
	svc, o := newClientWith(t, func(svc *actors.Service) error {
		return rc(svc).RegisterHost(testkit.Ctx(t), "h0", h.Addr(), good)
	})
	sh, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatalf("spawn over mutual TLS: %v", err)
	}
	if res, err := sh.Send(testkit.Ctx(t), messages.SendRequest{Text: "echo over-tls", Submit: true}); err != nil || !strings.Contains(res.Viewport, "over-tls") {
		t.Fatalf("%+v %v", res, err)
	}
}

// A client certificate from another CA is refused in the handshake: the
// client hears nothing, and RegisterHost says the host is not answering.
func TestMutualTLSRefusesAnotherCA(t *testing.T) {
	if isolate(t) {
		return
	}
	h, ca, _ := tlsHost(t)
	rogue := newCA(t, "rogue CA").issue(t, t.TempDir(), "rogue")
	svc := testkit.Service(t, testkit.ServiceOptions{Tolerate: []error{messages.ErrHostLost}})
	bad := &tls.Config{Certificates: []tls.Certificate{rogue.pair}, RootCAs: ca.pool}
	if err := rc(svc).RegisterHost(testkit.Ctx(t), "h", h.Addr(), bad); !errors.Is(err, messages.ErrHostLost) {
		t.Fatalf("rogue certificate: %v", err)
	}
	if !strings.Contains(h.Stderr(), "ptyhost serving") {
		t.Fatalf("host log:\n%s", h.Stderr())
	}
}

// Garbage on the host's port does not take it down; a busy port is an
// error, not a panic; an insecure host refuses a non-loopback address.
func TestHostSurvivesGarbageAndRefusesBusyPort(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	for _, junk := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), make([]byte, 4096)...)} {
		c, err := net.Dial("tcp", h.Addr())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(junk)
		_ = c.Close()
	}
	svc, o := newClient(t, h)
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Host: "h0"}); err != nil {
		t.Fatalf("after garbage: %v\n%s", err, h.Stderr())
	}
	for _, args := range [][]string{
		{"-listen", h.Addr(), "-insecure"},
		{"-listen", "0.0.0.0:0", "-insecure"},
		{"-listen", "127.0.0.1:0"},
	} {
		out, err := exec.Command(testkit.PtyhostBin(t), append([]string{"-sandbox", "danger-full-access"}, args...)...).CombinedOutput()
		if err == nil || strings.Contains(string(out), "panic") || !strings.Contains(string(out), "ptyhost:") {
			t.Fatalf("%v: want a clean refusal, got %v:\n%s", args, err, out)
		}
	}
}

// Certificates for the tests, made with crypto/x509.

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	pool *x509.CertPool
}

type issued struct {
	certFile, keyFile string
	pair              tls.Certificate
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pool: pool}
}

// issue makes a leaf for 127.0.0.1 usable as server and client: each side
// of a ptyactor link is both.
func (ca *testCA) issue(t *testing.T, dir, name string) issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	out := issued{certFile: filepath.Join(dir, name+".pem"), keyFile: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(out.certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out.keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if out.pair, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return out
}
