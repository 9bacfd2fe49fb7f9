package adversarial

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// The server's /proc figures, and the small helpers every case uses.

// Proc is the server's figures from /proc.
type Proc struct {
	RSSKiB int
	// HWMKiB is the peak RSS since the server started (VmHWM): its
	// growth over an attack bounds what the attack cost.
	HWMKiB  int
	Threads int
	FDs     int
	// CPU is the server's user and system time so far.
	CPU time.Duration
}

// Proc reads the server's figures from /proc/PID.
func (s *Server) Proc() Proc {
	s.t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/status")
	if err != nil {
		s.t.Fatalf("server status: %v", err)
	}
	var p Proc
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.Atoi(f[0])
		switch k {
		case "VmRSS":
			p.RSSKiB = n
		case "VmHWM":
			p.HWMKiB = n
		case "Threads":
			p.Threads = n
		}
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(s.PID) + "/fd")
	if err != nil {
		s.t.Fatalf("server fds: %v", err)
	}
	p.FDs = len(fds)
	p.CPU = cpuTime(s.PID)
	return p
}

// cpuTime is process pid's user and system time (/proc/PID/stat, in
// clock ticks of 10 ms: USER_HZ is 100 on Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}

// ctx is a context for one case's steps, ended at the test's end.
func ctx(t testing.TB) context.Context { return testkit.Ctx(t) }

// waitFor waits on cond with a deadline (testkit.WaitFor).
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, d, what, cond)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
