package messages

import "time"

// Config holds the timing and size limits shared by the runtime and its
// backends. Zero is never a valid value: start from DefaultConfig.
type Config struct {
	// ScrollbackLines bounds retained scrollback in lines.
	ScrollbackLines int
	// ScrollbackMaxBytes bounds retained scrollback in bytes; a single huge
	// line cannot bypass it.
	ScrollbackMaxBytes int
	// MaxReadBytes bounds a send's buffer, a read page, and an unterminated
	// control sequence.
	MaxReadBytes int
	// PollIntervalMs is the longest gap between readiness checks while a send
	// waits.
	PollIntervalMs int
	// ExactProbeAfterMs no longer delays the exact tier. The original
	// waited this long after the write before its first /proc probe;
	// ptyactor probes as soon as the write completes and whenever output
	// arrives, then backs off from 1ms to PollIntervalMs, because a
	// pre-existing wait cannot be mistaken for readiness (the evidence
	// rule requires the program to have consumed the input). The field is
	// kept and validated so configurations written for the original load.
	ExactProbeAfterMs int
	// IdleSilenceMs is the output silence after which a send settles as
	// inferred_idle.
	IdleSilenceMs int
	// HandoffGraceMs is the extra silence granted when a prompt marker was
	// seen but the terminal was not yet handed back to the shell. It must be
	// at least PollIntervalMs.
	HandoffGraceMs int
	// TimeoutMs is the absolute deadline of a send (and of startup).
	TimeoutMs int
	// DisposeGraceMs is how long teardown waits after TERM before KILL.
	DisposeGraceMs int
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		ScrollbackLines:    10000,
		ScrollbackMaxBytes: 4194304,
		MaxReadBytes:       262144,
		PollIntervalMs:     50,
		ExactProbeAfterMs:  150,
		IdleSilenceMs:      3000,
		HandoffGraceMs:     500,
		TimeoutMs:          30000,
		DisposeGraceMs:     3000,
	}
}

// MaxSafeInteger is the largest integer a JSON number (an IEEE double)
// holds exactly: 2^53-1. Configuration fields and the tools' integer
// arguments are bounded by it (the original's "safe integer" rule).
const MaxSafeInteger = 1<<53 - 1

// Validate checks every field: positive (safe) integers, MaxReadBytes not
// above ScrollbackMaxBytes, HandoffGraceMs not below PollIntervalMs.
func (c Config) Validate() error {
	fields := []struct {
		name string
		v    int
	}{
		{"scrollbackLines", c.ScrollbackLines},
		{"scrollbackMaxBytes", c.ScrollbackMaxBytes},
		{"maxReadBytes", c.MaxReadBytes},
		{"pollIntervalMs", c.PollIntervalMs},
		{"exactProbeAfterMs", c.ExactProbeAfterMs},
		{"idleSilenceMs", c.IdleSilenceMs},
		{"handoffGraceMs", c.HandoffGraceMs},
		{"timeoutMs", c.TimeoutMs},
		{"disposeGraceMs", c.DisposeGraceMs},
	}
	for _, f := range fields {
		if f.v <= 0 || f.v > MaxSafeInteger {
			return &ConfigError{Field: f.name, Msg: "must be a positive safe integer"}
		}
	}
	if c.MaxReadBytes > c.ScrollbackMaxBytes {
		return &ConfigError{Field: "maxReadBytes", Msg: "must not exceed scrollbackMaxBytes"}
	}
	if c.HandoffGraceMs < c.PollIntervalMs {
		return &ConfigError{Field: "handoffGraceMs", Msg: "must be at least pollIntervalMs"}
	}
	return nil
}

// Ms converts a millisecond field to a duration.
func Ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }
