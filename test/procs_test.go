package test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// checker is the binary's leak check (set up in TestMain).
var checker *testkit.LeakChecker

func trackShell(pid int)                 { checker.TrackShell(pid) }
func environHas(pid int, kv string) bool { return testkit.EnvironHas(pid, kv) }
func describe(ps []linux.Stat) string    { return testkit.DescribeProcesses(ps) }
func killAll(ps []linux.Stat)            { testkit.KillProcesses(ps) }

// procs lists the process table.
func procs() ([]linux.Stat, error) { return linux.ListStats(linux.FS{}) }

func mustProcs(t testing.TB) []linux.Stat {
	t.Helper()
	ps, err := procs()
	if err != nil {
		t.Fatalf("list /proc: %v", err)
	}
	return ps
}

// tagged lists the live processes started with tagVar=tag.
func tagged(t testing.TB, tag string) []linux.Stat {
	t.Helper()
	var out []linux.Stat
	for _, s := range mustProcs(t) {
		if s.Alive() && environHas(s.PID, tagVar+"="+tag) {
			out = append(out, s)
		}
	}
	return out
}

// sessionMembers lists the live processes of POSIX session sid.
func sessionMembers(t testing.TB, sid int) []linux.Stat {
	t.Helper()
	var out []linux.Stat
	for _, s := range mustProcs(t) {
		if s.Session == sid && s.Alive() {
			out = append(out, s)
		}
	}
	return out
}

func stat(t testing.TB, pid int) linux.Stat {
	t.Helper()
	s, err := linux.ReadStat(linux.FS{}, pid)
	if err != nil {
		t.Fatalf("stat %d: %v", pid, err)
	}
	return s
}

// foregroundSleep waits until the terminal of shell pid has handed its
// foreground to a group that runs `sleep`, and returns that group.
func foregroundSleep(t testing.TB, shell int) int {
	t.Helper()
	var pgid int
	testkit.WaitFor(t, 10*time.Second, "a foreground sleep in the shell's terminal", func() bool {
		sh, err := linux.ReadStat(linux.FS{}, shell)
		if err != nil || sh.TPGID <= 0 || sh.TPGID == shell {
			return false
		}
		for _, s := range sessionMembers(t, shell) {
			if s.Comm == "sleep" && s.PGRP == sh.TPGID {
				pgid = sh.TPGID
				return true
			}
		}
		return false
	})
	return pgid
}

// ignoresSignal reports whether the process ignores sig (SigIgn mask).
func ignoresSignal(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// gone reports whether pid has left the process table or is now another
// process (or a zombie waiting for its parent).
func gone(id linux.Identity) bool {
	s, err := linux.ReadStat(linux.FS{}, id.PID)
	if errors.Is(err, linux.ErrNotFound) {
		return true
	}
	return err == nil && (s.StartTime != id.StartTime || !s.Alive())
}
