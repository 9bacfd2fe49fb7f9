package test

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Item 18 (configuration): every rule of REFERENCE §b.
func TestConfigValidate(t *testing.T) {
	if err := messages.DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if err := testkit.PTYConfig().Validate(); err != nil {
		t.Fatalf("test timings: %v", err)
	}
	fields := []struct {
		name string
		set  func(*messages.Config, int)
	}{
		{"scrollbackLines", func(c *messages.Config, v int) { c.ScrollbackLines = v }},
		{"scrollbackMaxBytes", func(c *messages.Config, v int) { c.ScrollbackMaxBytes = v }},
		{"maxReadBytes", func(c *messages.Config, v int) { c.MaxReadBytes = v }},
		{"pollIntervalMs", func(c *messages.Config, v int) { c.PollIntervalMs = v }},
		{"exactProbeAfterMs", func(c *messages.Config, v int) { c.ExactProbeAfterMs = v }},
		{"idleSilenceMs", func(c *messages.Config, v int) { c.IdleSilenceMs = v }},
		{"handoffGraceMs", func(c *messages.Config, v int) { c.HandoffGraceMs = v }},
		{"timeoutMs", func(c *messages.Config, v int) { c.TimeoutMs = v }},
		{"disposeGraceMs", func(c *messages.Config, v int) { c.DisposeGraceMs = v }},
	}
	for _, f := range fields {
		for _, v := range []int{0, -1, -1 << 40, 1 << 53} {
			c := messages.DefaultConfig()
			f.set(&c, v)
			err := c.Validate()
			var ce *messages.ConfigError
			if !errors.Is(err, messages.ErrInvalidArgument) || !errors.As(err, &ce) || ce.Field != f.name {
				t.Errorf("%s = %d: %v, want a ConfigError for %s", f.name, v, err, f.name)
			}
		}
	}

	// The largest safe integer passes in every field.
	var huge messages.Config
	for _, f := range fields {
		f.set(&huge, 1<<53-1)
	}
	if err := huge.Validate(); err != nil {
		t.Errorf("every field 2^53-1: %v", err)
	}

	c := messages.DefaultConfig()
	c.MaxReadBytes = c.ScrollbackMaxBytes + 1
	if err := c.Validate(); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Errorf("maxReadBytes > scrollbackMaxBytes: %v", err)
	}
	c.MaxReadBytes = c.ScrollbackMaxBytes
	if err := c.Validate(); err != nil {
		t.Errorf("maxReadBytes == scrollbackMaxBytes: %v", err)
	}

	c = messages.DefaultConfig()
	c.HandoffGraceMs = c.PollIntervalMs - 1
	if err := c.Validate(); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Errorf("handoffGraceMs < pollIntervalMs: %v", err)
	}
	c.HandoffGraceMs = c.PollIntervalMs
	if err := c.Validate(); err != nil {
		t.Errorf("handoffGraceMs == pollIntervalMs: %v", err)
	}

	// The runtime refuses an invalid configuration before starting, and
	// takes the defaults for a zero one.
	bad := messages.DefaultConfig()
	bad.TimeoutMs = 0
	if svc, err := actors.NewService(actors.Options{Config: bad}); !errors.Is(err, messages.ErrInvalidArgument) || svc != nil {
		t.Errorf("NewService with timeoutMs 0: %v", err)
	}
	svc, err := actors.NewService(actors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Config() != messages.DefaultConfig() {
		t.Errorf("zero config became %+v, want the defaults", svc.Config())
	}
	if err := svc.Shutdown(testkit.Ctx(t)); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
