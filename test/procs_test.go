package test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
)

// shells records the pid of every shell a test saw. A PTY shell leads its
// own POSIX session (sid == pid), so anything it started and that outlived
// it is still found by its session id, even after re-parenting.
var shells = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

func trackShell(pid int) {
	shells.Lock()
	defer shells.Unlock()
	shells.pids[pid] = true
}

func trackedSession(sid int) bool {
	shells.Lock()
	defer shells.Unlock()
	return shells.pids[sid]
}

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

// environHas reports whether the process was started with kv in its
// environment.
func environHas(pid int, kv string) bool {
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

func descendantOf(s linux.Stat, root int, byPID map[int]linux.Stat) bool {
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

// suspects are the processes this binary is responsible for: descendants of
// the test process, members of a session a test's shell led, and carriers of
// this run's marker. Zombies count only when they are our own unreaped
// children (a missing Wait); re-parented zombies are init's business.
func suspects() ([]linux.Stat, error) {
	ps, err := procs()
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
		if s.PID == self {
			continue
		}
		if !s.Alive() && s.PPID != self {
			continue
		}
		if descendantOf(s, self, byPID) || trackedSession(s.Session) || environHas(s.PID, runVar+"="+runID) {
			out = append(out, s)
		}
	}
	return out, nil
}

func describe(ps []linux.Stat) string {
	var lines []string
	for _, s := range ps {
		lines = append(lines, fmt.Sprintf("pid %d ppid %d pgrp %d sid %d state %c %q", s.PID, s.PPID, s.PGRP, s.Session, s.State, s.Comm))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n  ")
}

// killAll SIGKILLs the processes if they still have the same identity.
func killAll(ps []linux.Stat) {
	for _, s := range ps {
		now, err := linux.ReadStat(linux.FS{}, s.PID)
		if err == nil && now.StartTime == s.StartTime {
			_ = syscall.Kill(s.PID, syscall.SIGKILL)
		}
	}
}

// finalLeakCheck runs after every test finished: whatever this binary
// started must be gone. It polls for at most grace (a process the last
// cleanup killed may still be on its way out), then reports and kills the
// rest. It returns the number of leaked processes.
func finalLeakCheck(grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		ps, err := suspects()
		if err != nil {
			fmt.Fprintln(os.Stderr, "leak check: list /proc:", err)
			return 1
		}
		if len(ps) == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "processes started by the tests outlived them (%d):\n  %s\n", len(ps), describe(ps))
			killAll(ps)
			return len(ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	waitFor(t, 10*time.Second, "a foreground sleep in the shell's terminal", func() bool {
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
