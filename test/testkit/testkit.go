package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
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

// Config is the runtime configuration for tests on scripted backends
// (backend/faulty, and fakes that start no process): every timer is short,
// so a fault the runtime only survives by its deadline still ends a test in
// about a second and a half.
func Config() messages.Config {
	c := messages.DefaultConfig()
	c.PollIntervalMs, c.ExactProbeAfterMs = 10, 20
	c.IdleSilenceMs, c.HandoffGraceMs = 250, 250
	c.TimeoutMs, c.DisposeGraceMs = 1500, 200
	return c
}

// PTYConfig is the runtime configuration for tests on real PTYs (bash,
// python3) under -race on a shared machine. It is REFERENCE "Real-PTY test
// timings" with two deliberate changes: the silence tier (30 s) and the
// deadline (60 s) are long, because a shell command settles on its prompt
// marker and a REPL on the exact tier, and these only decide how long a
// wrong answer takes to show. They must outlast any program's start on a
// loaded machine: with 2 s, python3 starting under -race with both cores
// busy settled on silence before it prompted (test/stress.sh). Scrollback is small (100 lines, 32 KiB, 16 KiB pages), so tests
// reach its bounds with little output. Tests that exercise silence or the
// deadline set their own.
func PTYConfig() messages.Config {
	return messages.Config{
		ScrollbackLines:    100,
		ScrollbackMaxBytes: 32768,
		MaxReadBytes:       16384,
		PollIntervalMs:     10,
		ExactProbeAfterMs:  20,
		IdleSilenceMs:      30000,
		HandoffGraceMs:     250,
		TimeoutMs:          60000,
		DisposeGraceMs:     500,
	}
}
