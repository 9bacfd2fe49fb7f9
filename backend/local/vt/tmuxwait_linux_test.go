//go:build linux

package vt

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// paneWaiter tells, from /proc, whether the program in a tmux pane waits
// for input with every key it was sent read: the runtime's own probe
// (probes/linux.ProbeGroup, as backend/local uses it) on the pane's
// process tree and its terminal's foreground group.
type paneWaiter struct {
	pid   int // #{pane_pid}, the pane's session leader
	term  linux.Terminal
	slave int // the pane's pts, opened to poll for unread input; never read
	arch  linux.Arch
}

// newPaneWaiter looks up the pane of s. Tests that need it are skipped
// where the probe has no table for the machine.
func newPaneWaiter(s *tmuxServer) *paneWaiter {
	s.t.Helper()
	arch := linux.ArchFor(runtime.GOARCH)
	if arch == linux.ArchUnsupported {
		s.t.Skipf("the /proc probe does not support %s", runtime.GOARCH)
	}
	f := strings.Fields(s.run("display", "-p", "#{pane_pid} #{pane_tty}"))
	if len(f) != 2 {
		s.t.Fatalf("pane pid and tty: %q", f)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		s.t.Fatal(err)
	}
	dev, err := linux.TerminalDevice(f[1])
	if err != nil {
		s.t.Fatal(err)
	}
	slave, err := unix.Open(f[1], unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = unix.Close(slave) })
	return &paneWaiter{pid: pid, term: linux.Terminal{Paths: []string{f[1], "/dev/tty"}, Device: dev}, slave: slave, arch: arch}
}

// shortWait is the longest own timeout of a wait that does not count as
// waiting for input: vim, after an Escape, waits in such slices for the
// rest of a possible key code and redraws only after them (actors/send.go
// looks past the same waits).
const shortWait = time.Second

// ready reports whether the terminal's input queue is empty (every key
// read) and a thread of the foreground group is blocked reading the
// terminal in a wait that has no timeout or one longer than a second (a
// shorter one ends by itself, and the program may draw then); seen says
// what was found.
//
// The caller must have had an answer from tmux since it sent keys: tmux
// writes them to the pane on a later turn of its event loop than the
// send-keys command, and before it serves another client.
func (w *paneWaiter) ready() (ok bool, seen string) {
	// poll, unlike TIOCINQ, first pushes what the master wrote into the
	// line discipline (see backend/local's inputConsumed).
	fds := []unix.PollFd{{Fd: int32(w.slave), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		return false, fmt.Sprintf("poll of the pane's terminal: %v", err)
	}
	if n > 0 {
		return false, "input not read yet"
	}
	st, err := linux.ReadStat(linux.FS{}, w.pid)
	if err != nil {
		return false, err.Error()
	}
	if st.TPGID <= 0 {
		return false, fmt.Sprintf("no foreground group (tpgid %d)", st.TPGID)
	}
	g, err := linux.ProbeGroup(linux.FS{}, linux.FS{}, w.arch, w.pid, st.TPGID, w.term)
	if err != nil {
		return false, err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "foreground group %d:", g.Pgid)
	for _, th := range g.Threads {
		if !th.Waiting {
			fmt.Fprintf(&b, " %s/%d not waiting;", th.Comm, th.TID)
			continue
		}
		if th.HasTimeout && th.Timeout <= shortWait {
			fmt.Fprintf(&b, " %s/%d in %v for %v (short);", th.Comm, th.TID, th.Call, th.Timeout)
			continue
		}
		return true, fmt.Sprintf("%s/%d waits in %v (timeout %v: %v)", th.Comm, th.TID, th.Call, th.HasTimeout, th.Timeout)
	}
	return false, b.String()
}
