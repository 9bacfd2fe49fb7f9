package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/mcpserver"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// TestMain keeps the flags' checks (the record folder they open) out of
// the user's state folder.
func TestMain(m *testing.M) {
	restore := testkit.PrivateState()
	code := m.Run()
	restore()
	os.Exit(code)
}

// The flags' defaults, and the checks made before anything starts (what
// a refused flag prints is held to the built binary in mcpserver's
// tests: TestHTTPMaxConnsFlag, TestLimitFlags, TestHTTPNeedsTLSOffLoopback).
func TestFlagDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-http", "127.0.0.1:0"}, io.Discard)
	h := c.server.HTTP
	if err != nil || h.MaxConns != mcpserver.DefaultMaxConns || h.MaxConnsPerSource != mcpserver.DefaultMaxConnsPerSource {
		t.Fatalf("default: %d %d %v", h.MaxConns, h.MaxConnsPerSource, err)
	}
	if err != nil || h.MaxSessions != mcpserver.DefaultMaxHTTPSessions || c.server.MaxTerminals != mcpserver.DefaultMaxTerminals || mcpserver.DefaultMaxHTTPSessions != 64 || mcpserver.DefaultMaxTerminals != 64 {
		t.Fatalf("defaults: %d sessions, %d terminals, %v", h.MaxSessions, c.server.MaxTerminals, err)
	}
	// Loopback needs no TLS; off loopback the TLS flags satisfy the check
	// (the files are loaded at start).
	for _, args := range [][]string{
		{"-http", "localhost:8765"}, {"-http", "[::1]:0"}, {"-http", "127.0.0.2:0"},
		{"-http", "0.0.0.0:8443", "-http-tls-cert", "c.pem", "-http-tls-key", "k.pem"},
	} {
		if _, err := parseFlags(args, io.Discard); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, args := range [][]string{
		{"-host", "127.0.0.1:7400"},                                     // no TLS, not insecure
		{"-host", "10.1.2.3:7400", "-host-insecure"},                    // insecure off loopback
		{"-host", "nope"},                                               // not host:port
		{"-host", "127.0.0.1:1", "-host-insecure", "-host-tls-ca", "x"}, // both
		{"-resume-file", filepath.Join(t.TempDir(), "resume.json")},     // the resume file needs -host
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

// Every flag that names a file holding a secret (its name says key,
// token or resume) puts that file on the sandbox's hide list; the bearer
// token's file is added when loaded (run), -record-key's by terminals.
// A new credential flag fails here until it is hidden too.
func TestCredentialFlagsHidden(t *testing.T) {
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	dir := t.TempDir()
	file := func(flag string) string { return filepath.Join(dir, strings.TrimPrefix(flag, "-")) }
	byTerminals := map[string]bool{"-record-key": true}
	byRun := map[string]bool{"-http-token-file": true}
	sets := [][]string{
		{"-http", "127.0.0.1:0", "-http-tls-cert", "c", "-http-tls-key", file("-http-tls-key"),
			"-console-tls-cert", "c", "-console-tls-key", file("-console-tls-key"),
			"-host", "127.0.0.1:1", "-host-tls-cert", "c", "-host-tls-ca", "c", "-host-tls-key", file("-host-tls-key")},
		{"-host", "127.0.0.1:1", "-host-insecure", "-resume-file", file("-resume-file")},
	}
	var hidden []string
	for _, args := range sets {
		c, err := parseFlags(args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		hidden = append(hidden, c.local.HideFiles...)
	}
	for _, line := range strings.Split(usage.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "-") {
			continue
		}
		name := f[0]
		if !strings.HasSuffix(name, "-key") && !strings.Contains(name, "token") && !strings.Contains(name, "resume") {
			continue
		}
		if byTerminals[name] || byRun[name] {
			continue
		}
		if !slices.Contains(hidden, file(name)) {
			t.Errorf("%s names a credential file that is not hidden from sandboxed shells (hidden: %q)", name, hidden)
		}
	}
}
