package testkit

// The service fixture starts a running actors.Service for a test (Service,
// Owner) and shuts it down when the test ends.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// ShutdownTimeout bounds the Shutdown of a Service at the end of its test.
const ShutdownTimeout = 30 * time.Second

// ServiceOptions is what a test's Service runs with.
type ServiceOptions struct {
	// Config is the runtime configuration; zero means PTYConfig().
	Config messages.Config
	// Backends are registered in order (e.g. local.New(local.Options{})).
	Backends []backend.Backend
	// Log receives the runtime's logs; zero means none.
	Log zerolog.Logger
	// Clock drives readiness timers; nil means the system clock.
	Clock actors.Clock
	// Tolerate lists the errors Shutdown may return (errors.Is) without
	// failing the test: messages.ErrHostLost after a host was killed, a
	// fault a test injected.
	Tolerate []error
}

// Service starts a runtime with opts and registers its backends. When the
// test ends it is shut down (within ShutdownTimeout); an error not in
// opts.Tolerate fails the test.
func Service(t testing.TB, opts ServiceOptions) *actors.Service {
	t.Helper()
	cfg := opts.Config
	if cfg == (messages.Config{}) {
		cfg = PTYConfig()
	}
	svc, err := actors.NewService(actors.Options{Config: cfg, Log: opts.Log, Clock: opts.Clock})
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil && !tolerated(err, opts.Tolerate) {
			t.Errorf("Shutdown: %v", err)
		}
	})
	for _, b := range opts.Backends {
		if _, err := svc.RegisterBackend(Ctx(t), b); err != nil {
			t.Fatalf("RegisterBackend: %v", err)
		}
	}
	return svc
}

func tolerated(err error, allowed []error) bool {
	for _, a := range allowed {
		if errors.Is(err, a) {
			return true
		}
	}
	return false
}

// Owner opens an owner named name on svc.
func Owner(t testing.TB, svc *actors.Service, name string) messages.Owner {
	t.Helper()
	o, err := svc.NewOwner(Ctx(t), name)
	if err != nil {
		t.Fatalf("NewOwner: %v", err)
	}
	return o
}
