package testkit

import "github.com/ptyactor/ptyactor/messages"

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
