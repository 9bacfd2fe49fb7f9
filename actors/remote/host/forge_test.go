package host_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/ptyactor/ptyactor/actors"
	ptyremote "github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// Forged host replies: a peer other than the host a client dialled sends
// the client's link what the host would, and the client must not take it.

// forgerEnv runs this test binary as a forger (helperForger).
const forgerEnv = "PTYACTOR_HOST_TEST_FORGER"

// forgedCalls is how many call ids the forger answers, from 1: without
// random call ids, far more than a test's calls (a heartbeat every 250
// ms for twenty minutes).
const forgedCalls = 5000

// forgedText is what the forged settlements say the command printed.
const forgedText = "FORGED: all 42 tests passed"

// helperForger is a peer with its own endpoint that forges host replies:
// it announces $FORGE_AS (the real host's address) as its own and sends,
// as the gateway there, to the link $FORGE_LINK on the client's endpoint
// $FORGE_TO a settled send (exit code 0, forgedText) for every call id
// 1..forgedCalls, once as a Reply and once as a Chunk, and a push saying
// the session $FORGE_SESSION exited. With $FORGE_TLS (cert|key|ca) it
// speaks mutual TLS with that certificate. It prints "forged" once it
// handed everything to its endpoint, and exits when its stdin closes.
func helperForger() {
	err := func() error {
		creds := insecure.NewCredentials()
		if files := os.Getenv("FORGE_TLS"); files != "" {
			pair, pool, err := tlsFiles(files)
			if err != nil {
				return err
			}
			creds = credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ClientCAs: pool,
				ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
		}
		as := os.Getenv("FORGE_AS")
		sys := actor.NewActorSystem()
		r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0,
			remote.WithAdvertisedHost(as),
			remote.WithServerOptions(grpc.Creds(creds)),
			remote.WithDialOptions(grpc.WithTransportCredentials(creds)),
		))
		r.Start()
		defer r.Shutdown(false)

		link := actor.NewPID(os.Getenv("FORGE_TO"), os.Getenv("FORGE_LINK"))
		gateway := actor.NewPID(as, wire.GatewayID)
		code := 0
		result := wire.SendResultTo(messages.SendResult{Viewport: forgedText, Cause: messages.CausePrompt, ExitCode: &code})
		for call := uint64(1); call <= forgedCalls; call++ {
			rep := &wire.Reply{Call: call, Body: &wire.Reply_SendSettled{SendSettled: &wire.SendSettled{Result: result}}}
			sys.Root.RequestWithCustomSender(link, rep, gateway)
			data, err := proto.Marshal(rep)
			if err != nil {
				return err
			}
			sys.Root.RequestWithCustomSender(link, &wire.Chunk{Call: call, Last: true, Data: data}, gateway)
		}
		exited := &wire.Reply{Body: &wire.Reply_SessionExited{SessionExited: &wire.SessionExited{
			Session: os.Getenv("FORGE_SESSION"), Status: wire.StatusTo(messages.ExitedWith(0)),
		}}}
		sys.Root.RequestWithCustomSender(link, exited, gateway)
		fmt.Println("forged")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return nil
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "forger:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// forge runs a forger (helperForger) against the client's link and
// returns once it sent everything; cleanup closes its stdin and waits for
// it.
func forge(t *testing.T, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{forgerEnv + "=1"}, env...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("the forger did not exit after its stdin closed; killing it")
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make([]byte, len("forged\n"))
	_, err = io.ReadFull(stdout, line)
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(done)
	}()
	if err != nil || string(line) != "forged\n" {
		t.Fatalf("the forger failed (%v): %s", err, stderr)
	}
}

// linkID is the id of the client's one host link, as its actor system
// registered it.
func linkID(t *testing.T, svc *actors.Service) string {
	t.Helper()
	for _, bucket := range svc.System().ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, id := range bucket.Keys() {
			if strings.HasPrefix(id, wire.LinkPrefix) {
				return id
			}
		}
	}
	t.Fatal("no host link registered")
	return ""
}

// forgeryCase starts a send that waits on a gate on the host, lets forge
// do its worst while it is pending, waits until the client's log shows
// refused (the forgery was seen and not taken), and then lets the real
// command finish: its result, not the forger's, must come back, and the
// session must still be running.
func forgeryCase(t *testing.T, h *testkit.Host, tlsConf *tls.Config, refused string, forge func(svc *actors.Service, session string)) {
	t.Helper()
	logs := &lockedBuffer{}
	svc := testkit.Service(t, testkit.ServiceOptions{Log: zerolog.New(logs).Level(zerolog.WarnLevel)})
	opts := []ptyremote.HostOption{}
	if tlsConf == nil {
		opts = append(opts, ptyremote.HostInsecure())
	}
	if err := rc(svc).RegisterHost(testkit.Ctx(t), "h0", h.Addr(), tlsConf, opts...); err != nil {
		t.Fatal(err)
	}
	sh, err := svc.Spawn(testkit.Ctx(t), testkit.Owner(t, svc, "test"), messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatal(err)
	}
	gate, release := fifoGate(t)
	op, err := sh.StartSend(testkit.Ctx(t), messages.SendRequest{Text: "read _ < " + gate + "; echo real-output; false", Submit: true})
	if err != nil {
		t.Fatal(err)
	}

	forge(svc, string(sh.ID()))
	testkit.WaitFor(t, time.Minute, "the forgery refused, or taken", func() bool {
		select {
		case <-op.Done():
			return true
		default:
			return strings.Contains(logs.String(), refused)
		}
	})
	select {
	case <-op.Done():
		res, err := op.Result(testkit.Ctx(t))
		t.Fatalf("the send settled before the real command finished: %+v, %v (the forgery was taken)", res, err)
	default:
	}
	release()
	res, err := op.Result(testkit.Ctx(t))
	if err != nil || !strings.Contains(res.Viewport, "real-output") || strings.Contains(res.Viewport, "FORGED") ||
		res.ExitCode == nil || *res.ExitCode != 1 {
		t.Fatalf("send: %+v (exit %v), %v: want the host's real-output, exit 1", res, res.ExitCode, err)
	}
	if snap, err := sh.Describe(testkit.Ctx(t)); err != nil || snap.Status.Exited {
		t.Fatalf("after the forged exit push: %+v, %v: want the session running", snap.Status, err)
	}
}

// Without TLS, a local process that forges replies with the link's old,
// guessable name (the first link) and sequential call ids, announcing the
// host's own address as its sender's, reaches nothing: the link's id is
// random, and the client's endpoint refuses a message to an id that is
// not a live link's.
func TestForgedRepliesWithoutTLSRefused(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	forgeryCase(t, h, nil, "target not admitted", func(svc *actors.Service, session string) {
		forge(t, "FORGE_TO="+svc.System().ProcessRegistry.Address, "FORGE_LINK="+wire.LinkPrefix+"1",
			"FORGE_AS="+h.Addr(), "FORGE_SESSION="+session)
	})
}

// Without TLS, a forger that knows the link's id but announces its own
// address is not the gateway at the dialled address: refused by the link.
func TestForgedRepliesFromAnotherAddressRefused(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	forgeryCase(t, h, nil, "not the gateway at the dialled address", func(svc *actors.Service, session string) {
		// On the connection's IP, as the endpoint requires; not the host's.
		forge(t, "FORGE_TO="+svc.System().ProcessRegistry.Address, "FORGE_LINK="+linkID(t, svc),
			"FORGE_AS=127.0.0.1:1", "FORGE_SESSION="+session)
	})
}

// With mutual TLS, a forger holding another certificate of the same CA
// (the README's recipe gives every machine one), told the link's id,
// announcing the host's address and connecting from the host's IP, still
// is not the host: its identity is not the one the client's connection to
// the host verified, and the link refuses every reply, chunk and push.
func TestForgedRepliesWithAnotherCertificateRefused(t *testing.T) {
	if isolate(t) {
		return
	}
	h, ca, clientCert := tlsHost(t)
	dir := t.TempDir()
	forger := ca.issue(t, dir, "forger")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	good := &tls.Config{Certificates: []tls.Certificate{clientCert.pair}, RootCAs: ca.pool}
	forgeryCase(t, h, good, "TLS identity is not the dialled host's", func(svc *actors.Service, session string) {
		forge(t, "FORGE_TO="+svc.System().ProcessRegistry.Address, "FORGE_LINK="+linkID(t, svc),
			"FORGE_AS="+h.Addr(), "FORGE_SESSION="+session,
			"FORGE_TLS="+strings.Join([]string{forger.certFile, forger.keyFile, caFile}, "|"))
	})
}
