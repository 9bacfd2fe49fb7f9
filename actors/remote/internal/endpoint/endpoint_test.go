package endpoint

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// Every test here starts at most one endpoint at a time: the pinned
// protoactor's remote.Start writes grpclog's global logger, which another
// live endpoint's gRPC goroutines read (see actors/remote/host's isolate).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func loopbackConfig() Config {
	return Config{
		Listen:   "127.0.0.1:0",
		Insecure: true,
		Admit:    Admit{Types: []string{"t.Req"}, Target: func(string) bool { return true }},
		Log:      zerolog.Nop(),
	}
}

// An endpoint listens on the port it reports, and Close stops it: the port
// refuses connections and none of the library's or gRPC's goroutines
// remain.
func TestStartAndClose(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	ep, err := Start(sys, loopbackConfig())
	if err != nil {
		t.Fatal(err)
	}
	addr := ep.Addr()
	_, portText, err := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	if err != nil || port == 0 {
		t.Fatalf("Addr %q: want 127.0.0.1 and the port picked (%v)", addr, err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial the started endpoint: %v", err)
	}
	_ = conn.Close()

	if listening, ok := listens(t, port); ok && !listening {
		t.Fatalf("the started endpoint's port %d: no listener of this process", port)
	}
	ep.Close()
	if listening, ok := listens(t, port); !ok {
		if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial after Close: %v, want connection refused", err)
		}
	} else if listening {
		t.Fatalf("this process still listens on port %d after Close", port)
	}
	goleak.VerifyNone(t)
}

// A peer that connected and never speaks keeps gRPC's graceful stop
// waiting (its handshake allows two minutes); Close stops the server hard
// after closeGrace instead, and leaves nothing behind.
func TestCloseDoesNotWaitForASilentPeer(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	ep, err := Start(sys, loopbackConfig())
	if err != nil {
		t.Fatal(err)
	}
	silent, err := net.Dial("tcp", ep.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	closed := make(chan struct{})
	go func() { ep.Close(); close(closed) }()
	// A guard, not a speed figure: without the hard stop Close would wait
	// for the handshake's two minutes or the library's ten seconds.
	select {
	case <-closed:
	case <-time.After(closeGrace + 5*time.Second):
		t.Fatalf("Close still waits for the silent peer after %v", closeGrace+5*time.Second)
	}
	// The server closed the silent connection: after the server's own
	// preface, reading ends (EOF or reset), not at the deadline.
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, silent)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the silent peer's connection is still open after Close: %v", err)
	}
	goleak.VerifyNone(t)
}

// Start refuses, with an error and no goroutine left, what the library
// would panic on or what must not listen: a busy port, an insecure
// endpoint off loopback, TLS without a certificate, TLS and Insecure both.
func TestStartRefuses(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"busy port", func(c *Config) { c.Listen = busy.Addr().String() }, "address already in use"},
		{"insecure off loopback", func(c *Config) { c.Listen = "0.0.0.0:0" }, "not a loopback address"},
		{"no port", func(c *Config) { c.Listen = "127.0.0.1" }, "missing port"},
		{"TLS without a certificate", func(c *Config) { c.Insecure = false; c.TLS = &tls.Config{} }, "needs a certificate"},
		{"TLS and Insecure", func(c *Config) { c.TLS = &tls.Config{} }, "exclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := actor.NewActorSystem()
			defer sys.Shutdown()
			cfg := loopbackConfig()
			tc.edit(&cfg)
			ep, err := Start(sys, cfg)
			if err == nil {
				ep.Close()
				t.Fatalf("Start(%+v) succeeded", cfg.Listen)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}
