package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Timeout bounds a Ctx when the test's own deadline is further away.
const Timeout = time.Minute

// deadlineMargin is kept free before the test binary's deadline, so that a
// hung call fails its test (and the failure is reported) rather than the
// binary being killed.
const deadlineMargin = 5 * time.Second

// Ctx returns a context for a test's calls: it ends after Timeout, or
// shortly before the test binary's deadline (go test -timeout) if that is
// nearer, and it is cancelled when the test ends. A call that hangs fails
// its test instead of hanging the suite. Its cause names the test.
func Ctx(t testing.TB) context.Context {
	t.Helper()
	d := Timeout
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dt.Deadline(); ok {
			d = min(d, time.Until(end)-deadlineMargin)
		}
	}
	cause := fmt.Errorf("%s: the test's watchdog (testkit.Ctx, %v) expired: %w", t.Name(), d, context.DeadlineExceeded)
	ctx, cancel := context.WithTimeoutCause(context.Background(), d, cause)
	t.Cleanup(cancel)
	return ctx
}

// maxPoll caps WaitFor's poll interval.
const maxPoll = 10 * time.Millisecond

// WaitFor polls cond until it holds, and fails the test naming what if it
// does not within timeout. The interval starts at 1 ms and doubles up to
// 10 ms: it is the granularity of the wait, never a guess at how long
// something takes.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for poll := time.Millisecond; !cond(); poll = min(2*poll, maxPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(poll)
	}
}
