package testkit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

func TestConfigsValidate(t *testing.T) {
	for name, c := range map[string]func() error{"Config": Config().Validate, "PTYConfig": PTYConfig().Validate} {
		if err := c(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCtxEndsAndIsCancelledAtCleanup(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) {
		ctx = Ctx(t)
		end, ok := ctx.Deadline()
		if !ok || time.Until(end) > Timeout {
			t.Fatalf("deadline %v (set %v), want within %v", end, ok, Timeout)
		}
		if ctx.Err() != nil {
			t.Fatalf("live context already done: %v", ctx.Err())
		}
	})
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after the test: %v, want cancelled", ctx.Err())
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, time.Second, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
	// Expiry fails the test with the name of what was awaited.
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		WaitFor(ft, 20*time.Millisecond, "never", func() bool { return false })
	}()
	<-done
	if ft.msg != "timed out after 20ms waiting for never" {
		t.Fatalf("failure %q", ft.msg)
	}
}

// fakeT records a Fatalf and ends the calling goroutine, as testing.T does.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
