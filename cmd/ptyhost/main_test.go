package main

import (
	"io"
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/actors/remote/host"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestMain(m *testing.M) {
	restore := testkit.PrivateState()
	code := m.Run()
	restore()
	os.Exit(code)
}

// -max-sessions-per-client has a limit by default; 0 (no limit) must be
// asked for, and a negative value is refused.
func TestMaxSessionsPerClientDefault(t *testing.T) {
	base := []string{"-listen", "127.0.0.1:0", "-insecure"}
	c, err := parseFlags(base, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.maxSessions != host.DefaultMaxSessionsPerClient || host.DefaultMaxSessionsPerClient != 64 {
		t.Fatalf("default -max-sessions-per-client %d, want %d (64)", c.maxSessions, host.DefaultMaxSessionsPerClient)
	}
	if c, err := parseFlags(append(base, "-max-sessions-per-client", "0"), io.Discard); err != nil || c.maxSessions != 0 {
		t.Fatalf("-max-sessions-per-client 0: %d %v", c.maxSessions, err)
	}
	if _, err := parseFlags(append(base, "-max-sessions-per-client", "-1"), io.Discard); err == nil {
		t.Fatal("-max-sessions-per-client -1 accepted")
	}
}
