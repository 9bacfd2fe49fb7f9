package test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// gate is a FIFO a shell command blocks on until the test releases it, so
// a command is still running when a send settles on silence, and goes on
// only when the test says, not when a sleep happens to end.
//
// The test holds the FIFO open for reading and writing for its whole life:
// on Linux that open never blocks, a reader's open returns at once, and a
// line written by release stays in the pipe until a reader takes it,
// whether the reader opened the FIFO before the release or after.
type gate struct {
	t    testing.TB
	path string
	f    *os.File
}

// newGate makes a FIFO in a short temporary directory (the path is part of
// the command line the terminal echoes). A command still blocked on it
// when the test ends dies with its session.
func newGate(t testing.TB) *gate {
	t.Helper()
	dir, err := os.MkdirTemp("", "gate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "g")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open the gate: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return &gate{t: t, path: path, f: f}
}

// wait is shell text that blocks until the next release (bash's read
// builtin takes one line from a pipe, byte by byte, and no more).
func (g *gate) wait() string { return "read _ < '" + g.path + "'" }

// release lets one blocked (or future) wait go on.
func (g *gate) release() {
	g.t.Helper()
	if _, err := g.f.WriteString("\n"); err != nil {
		g.t.Fatalf("release the gate: %v", err)
	}
}
