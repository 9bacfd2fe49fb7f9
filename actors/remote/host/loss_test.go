package host_test

import (
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// hostLossPromise is a product promise (README, "Host loss"): with the
// default heartbeat (remote.DefaultHeartbeatEvery, a beat every 250 ms;
// remote.DefaultHostLossAfter, a host silent for 1.5 s is lost), every
// pending operation on a host that dies or stops answering fails with
// ErrHostLost within 2 s. The margin over the loss timeout is two beats
// (four of the link's checks, which run every half beat), for the checks'
// grain and the failure's way to the caller; measured 1.5-1.6 s under
// -race on a loaded machine. Taking longer breaks the promise.
const hostLossPromise = 2 * time.Second

// A host that dies (kill -9) or stops answering (SIGSTOP) mid-send: the
// pending Send fails with ErrHostLost within the promised 2 s, not at its
// deadline, and the session reports exited with cause host_lost.
func TestHostLossFailsPendingSend(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, h *testkit.Host)
	}{
		{"kill -9", func(t *testing.T, h *testkit.Host) { h.Kill(t) }},
		{"SIGSTOP", func(t *testing.T, h *testkit.Host) {
			if err := h.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if isolate(t) {
				return
			}
			h, svc, o, sh := spawnOnHost(t)
			ctx := testkit.Ctx(t)
			op, err := sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
			if err != nil {
				t.Fatal(err)
			}
			// The sleep runs on the host once output says so.
			testkit.WaitFor(t, 5*time.Second, "the sleep to run", func() bool {
				d, err := op.ReadOutput(ctx)
				return err == nil && d.Delta != "" || err != nil
			})
			lostAt := time.Now()
			tc.lose(t, h)
			_, err = op.Result(ctx)
			took := time.Since(lostAt)
			t.Logf("host lost → Send failed in %v", took.Round(time.Millisecond))
			if !errors.Is(err, messages.ErrHostLost) {
				t.Fatalf("send: %v, want ErrHostLost", err)
			}
			if took > hostLossPromise {
				t.Fatalf("the pending send failed after %v, want within the promised %v", took, hostLossPromise)
			}
			snap, err := sh.Describe(ctx)
			st := snap.Status
			if err != nil || !st.Exited || st.Cause != messages.CauseHostLost {
				t.Fatalf("status %v (%v), want exited with cause host_lost", st, err)
			}
			// Later calls fail at once, typed; the client stays healthy.
			if _, err := sh.Send(ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrSessionExited) || !errors.Is(err, messages.ErrHostLost) {
				t.Fatalf("send on a lost session: %v", err)
			}
			if _, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: messages.AnyHost}); !errors.Is(err, messages.ErrNoHost) {
				t.Fatalf("spawn with every host lost: %v", err)
			}
			if tc.name == "kill -9" {
				// The host's death hung its terminals up: nothing of the
				// session outlives it.
				testkit.WaitFor(t, 5*time.Second, "the dead host's shell to exit", func() bool {
					return syscall.Kill(sh.PID(), 0) == syscall.ESRCH
				})
			}
			if _, err := sh.Close(ctx, "written off"); err != nil {
				t.Fatalf("close of a lost session: %v", err)
			}
			if list, _ := svc.List(ctx, o); len(list) != 0 {
				t.Fatalf("list after close: %v", list)
			}
		})
	}
}

// A host that stops answering (SIGSTOP) and comes back (SIGCONT): the
// pending send fails with ErrHostLost within the promised 2 s; once the
// host answers again it takes new sessions, and the session the client
// wrote off is closed on it at once, with the usual teardown (its shell
// and a background job gone), not when the host's grace for a lost client
// (5 minutes here) ends. Closing the written-off session afterwards leaves
// the new one alone.
func TestHostComesBack(t *testing.T) {
	if isolate(t) {
		return
	}
	h, svc, o, old := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	res, err := old.Send(ctx, messages.SendRequest{Text: "sleep 300 & echo bg=$!", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`bg=(\d+)`).FindStringSubmatch(res.Viewport)
	if m == nil {
		t.Fatalf("no background pid in %q", res.Viewport)
	}
	bg, _ := strconv.Atoi(m[1])
	shell := old.PID()
	op, err := old.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the sleep to run", func() bool {
		d, err := op.ReadOutput(ctx)
		return err == nil && d.Delta != "" || err != nil
	})

	stoppedAt := time.Now()
	if err := h.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	_, err = op.Result(ctx)
	if took := time.Since(stoppedAt); !errors.Is(err, messages.ErrHostLost) || took > hostLossPromise {
		t.Fatalf("pending send: %v after %v, want ErrHostLost within the promised %v", err, took, hostLossPromise)
	}
	if err := h.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	contAt := time.Now()

	var sh *actors.Session
	testkit.WaitFor(t, 10*time.Second, "the host to take new sessions", func() bool {
		s, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
		if err != nil && !errors.Is(err, messages.ErrHostLost) {
			t.Fatalf("spawn on the host that came back: %v", err)
		}
		sh = s
		return err == nil
	})
	t.Logf("SIGCONT → a new session in %v", time.Since(contAt).Round(time.Millisecond))
	if r, err := sh.Send(ctx, messages.SendRequest{Text: "echo back", Submit: true}); err != nil || !strings.Contains(r.Viewport, "back") {
		t.Fatalf("send on the new session: %+v %v", r, err)
	}
	testkit.WaitFor(t, 5*time.Second, "the written-off session's shell and job to be torn down", func() bool {
		return syscall.Kill(shell, 0) == syscall.ESRCH && syscall.Kill(bg, 0) == syscall.ESRCH
	})
	t.Logf("SIGCONT → the written-off tree gone in %v", time.Since(contAt).Round(time.Millisecond))

	if _, err := old.Close(ctx, "written off"); err != nil {
		t.Fatalf("close of the written-off session: %v", err)
	}
	if r, err := sh.Send(ctx, messages.SendRequest{Text: "echo still", Submit: true}); err != nil || !strings.Contains(r.Viewport, "still") {
		t.Fatalf("send on the new session after the old one's close: %+v %v", r, err)
	}
	if list, err := svc.List(ctx, o); err != nil || len(list) != 1 || list[0].SessionID != sh.ID() {
		t.Fatalf("list: %v %v", list, err)
	}
}

// A host whose first contact is slow (here: stopped when the client
// registers it and resumed after the loss timeout; under load, a dial
// whose TLS handshake takes longer than the loss timeout) is not written
// off: until a host first answered, the link allows the dial's bound
// (endpoint.DialTimeout, 2 s) on top of the loss timeout. The library
// holds the heartbeats while it dials, and sends them once the host
// runs again (within the dial's bound).
func TestHostLateFirstContact(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "insecure"
		if useTLS {
			name = "mutual TLS"
		}
		t.Run(name, func(t *testing.T) {
			if isolate(t) {
				return
			}
			lateFirstContact(t, useTLS)
		})
	}
}

func lateFirstContact(t *testing.T, useTLS bool) {
	var (
		h    *testkit.Host
		cfg  *tls.Config
		opts []remote.HostOption
	)
	if useTLS {
		dir := t.TempDir()
		ca := newCA(t, "ptyactor test CA")
		hostCert, client := ca.issue(t, dir, "host"), ca.issue(t, dir, "client")
		caFile := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
			t.Fatal(err)
		}
		h = startHostTLS(t, "-listen", "127.0.0.1:0", "-tls-cert", hostCert.certFile, "-tls-key", hostCert.keyFile, "-tls-ca", caFile)
		cfg = &tls.Config{Certificates: []tls.Certificate{client.pair}, RootCAs: ca.pool}
	} else {
		h = startHost(t)
		opts = append(opts, remote.HostInsecure())
	}
	const every, lossAfter = 50 * time.Millisecond, 300 * time.Millisecond
	opts = append(opts, remote.HostHeartbeat(every, lossAfter))
	if err := h.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	svc, o := newClientWith(t, func(svc *actors.Service) error {
		registered := make(chan error, 1)
		c := rc(svc)
		go func() { registered <- c.RegisterHost(testkit.Ctx(t), "h0", h.Addr(), cfg, opts...) }()
		// A timed phase, the point of the test: the host stays stopped
		// past the loss timeout and three beats more (six of the link's
		// checks), where a link counting only the loss timeout has
		// written it off; and well within the dial's bound, so the
		// library's first dial completes once the host runs.
		time.Sleep(lossAfter + 3*every)
		if err := h.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		return <-registered
	})
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatalf("spawn on the host that answered late: %v", err)
	}
	if r, err := sh.Send(ctx, messages.SendRequest{Text: "echo late", Submit: true}); err != nil || !strings.Contains(r.Viewport, "late") {
		t.Fatalf("send: %+v %v", r, err)
	}
	if _, err := sh.Close(ctx, "done"); err != nil {
		t.Fatal(err)
	}
}

// A host that never answers (stopped from before the client registers
// it) is still lost, within the loss timeout plus the dial's bound (and
// the checks' grain) of its registration: RegisterHost fails with
// ErrHostLost.
func TestHostNeverAnswers(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	if err := h.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const every, lossAfter = 50 * time.Millisecond, 300 * time.Millisecond
	svc, _ := newClientWith(t, func(svc *actors.Service) error { return nil })
	start := time.Now()
	err := rc(svc).RegisterHost(testkit.Ctx(t), "h0", h.Addr(), nil, remote.HostInsecure(), remote.HostHeartbeat(every, lossAfter))
	took := time.Since(start)
	if !errors.Is(err, messages.ErrHostLost) {
		t.Fatalf("register a host that never answers: %v, want ErrHostLost", err)
	}
	// The bound: the loss timeout and the dial's (endpoint.DialTimeout,
	// 2 s), with hostLossPromise's margin over the loss timeout. Not
	// before: until its first answer a host is allowed the dial's bound.
	allowed := lossAfter + 2*time.Second
	if bound := allowed + hostLossPromise - remote.DefaultHostLossAfter; took < allowed || took > bound {
		t.Fatalf("the host was found lost after %v, want after %v and within %v", took, allowed, bound)
	}
	t.Logf("a host that never answers: lost after %v", took.Round(time.Millisecond))
}
