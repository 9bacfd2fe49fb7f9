package testkit

// The leak check proves, at the end of a test binary, that no process it
// started outlived the tests: descendants of the test process, members of
// any shell session a test saw, and carriers of a per-run environment
// marker (which survives re-parenting and setsid) must all be gone.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"go.uber.org/goleak"
)

// LeakChecker tracks one test binary's processes.
type LeakChecker struct {
	marker string // NAME=VALUE set in this process's environment

	mu     sync.Mutex
	shells map[int]bool
}

// Value is the marker's value (the marker is its name=Value).
func (c *LeakChecker) Value() string { return c.marker[strings.IndexByte(c.marker, '=')+1:] }

// NewLeakChecker sets a fresh marker in the process environment under name, so every
// process the tests start with the default environment inherits it.
func NewLeakChecker(name string) (*LeakChecker, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	if err := os.Setenv(name, id); err != nil {
		return nil, err
	}
	return &LeakChecker{marker: name + "=" + id, shells: map[int]bool{}}, nil
}

// TrackShell records a shell pid: a PTY shell leads its own session, so
// whatever it left behind is found by session id.
func (c *LeakChecker) TrackShell(pid int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shells[pid] = true
}

// TrackedSession reports whether sid is a tracked shell's session.
func (c *LeakChecker) TrackedSession(sid int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shells[sid]
}

// EnvironHas reports whether the process was started with kv in its
// environment.
func EnvironHas(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

// DescendantOf reports whether s descends from root by parent pid.
func DescendantOf(s linux.Stat, root int, byPID map[int]linux.Stat) bool {
	for i := 0; i < 4096 && s.PPID > 1; i++ {
		if s.PPID == root {
			return true
		}
		p, ok := byPID[s.PPID]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

// Suspects lists live processes the binary is responsible for (and its own
// unreaped zombie children).
func (c *LeakChecker) Suspects() ([]linux.Stat, error) {
	ps, err := linux.ListStats(linux.FS{})
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	byPID := make(map[int]linux.Stat, len(ps))
	for _, s := range ps {
		byPID[s.PID] = s
	}
	var out []linux.Stat
	for _, s := range ps {
		if s.PID == self || (!s.Alive() && s.PPID != self) {
			continue
		}
		if DescendantOf(s, self, byPID) || c.TrackedSession(s.Session) || EnvironHas(s.PID, c.marker) {
			out = append(out, s)
		}
	}
	return out, nil
}

// DescribeProcesses renders processes one per line.
func DescribeProcesses(ps []linux.Stat) string {
	var lines []string
	for _, s := range ps {
		lines = append(lines, fmt.Sprintf("pid %d ppid %d pgrp %d sid %d state %c %q", s.PID, s.PPID, s.PGRP, s.Session, s.State, s.Comm))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n  ")
}

// KillProcesses SIGKILLs the processes that still have the same identity.
func KillProcesses(ps []linux.Stat) {
	for _, s := range ps {
		now, err := linux.ReadStat(linux.FS{}, s.PID)
		if err == nil && now.StartTime == s.StartTime {
			_ = syscall.Kill(s.PID, syscall.SIGKILL)
		}
	}
}

// Final runs after every test finished: it polls for at most grace (the
// last cleanup may still be on its way out), then reports and kills what
// is left. It returns the number of leaked processes.
func (c *LeakChecker) Final(grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		ps, err := c.Suspects()
		if err != nil {
			fmt.Fprintln(os.Stderr, "leak check: list /proc:", err)
			return 1
		}
		if len(ps) == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "processes started by the tests outlived them (%d):\n  %s\n", len(ps), DescribeProcesses(ps))
			KillProcesses(ps)
			return len(ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Main is a TestMain body: it sets the marker under name, runs the tests,
// then fails the binary if a process it started or a goroutine outlived
// them. It returns the checker's exit code; the caller passes it to
// os.Exit. setup runs after the marker is set and before the tests.
func Main(m interface{ Run() int }, name string, setup func(*LeakChecker)) int {
	c, err := NewLeakChecker(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "leakcheck: set the run marker:", err)
		return 2
	}
	setup(c)
	code := m.Run()
	if n := c.Final(5 * time.Second); n > 0 && code == 0 {
		code = 1
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "goroutine leak after the tests: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
