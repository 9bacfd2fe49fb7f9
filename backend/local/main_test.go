package local

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
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"go.uber.org/goleak"
)

// runVar marks every process this test binary starts: shells inherit it
// from the default parent environment, and their children from them.
const runVar = "PA_LOCAL_TEST_RUN"

var runID string

func TestMain(m *testing.M) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	runID = fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	if err := os.Setenv(runVar, runID); err != nil {
		fmt.Fprintln(os.Stderr, "setenv:", err)
		os.Exit(2)
	}
	code := m.Run()
	if n := finalLeakCheck(5 * time.Second); n > 0 && code == 0 {
		code = 1
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "goroutine leak after the tests: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// shells records every shell pid a test saw: a PTY shell leads its own
// session, so whatever it left behind is found by session id.
var shells = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

func trackShell(pid int) {
	shells.Lock()
	defer shells.Unlock()
	shells.pids[pid] = true
}

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

// suspects are live processes this binary is responsible for: descendants
// of the test process (and its unreaped zombie children), members of a
// tracked shell's session, and carriers of the run marker.
func suspects() ([]linux.Stat, error) {
	ps, err := linux.ListStats(linux.FS{})
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	byPID := make(map[int]linux.Stat, len(ps))
	for _, s := range ps {
		byPID[s.PID] = s
	}
	descends := func(s linux.Stat) bool {
		for i := 0; i < 4096 && s.PPID > 1; i++ {
			if s.PPID == self {
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
	shells.Lock()
	defer shells.Unlock()
	var out []linux.Stat
	for _, s := range ps {
		if s.PID == self || (!s.Alive() && s.PPID != self) {
			continue
		}
		if descends(s) || shells.pids[s.Session] || environHas(s.PID, runVar+"="+runID) {
			out = append(out, s)
		}
	}
	return out, nil
}

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
			var lines []string
			for _, s := range ps {
				lines = append(lines, fmt.Sprintf("pid %d ppid %d sid %d state %c %q", s.PID, s.PPID, s.Session, s.State, s.Comm))
				if now, err := linux.ReadStat(linux.FS{}, s.PID); err == nil && now.StartTime == s.StartTime {
					_ = syscall.Kill(s.PID, syscall.SIGKILL)
				}
			}
			sort.Strings(lines)
			fmt.Fprintf(os.Stderr, "processes started by the tests outlived them:\n  %s\n", strings.Join(lines, "\n  "))
			return len(ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
