//go:build linux

package testkit

import (
	"fmt"
	"runtime"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// TmuxPane is one tmux pane, looked at from outside.
type TmuxPane struct {
	pid   int // #{pane_pid}, the pane's session leader
	term  linux.Terminal
	slave int // the pane's pts, opened to poll for unread input; never read
	arch  linux.Arch
}

// OpenTmuxPane looks at the pane whose leader is pid (#{pane_pid}) on the terminal
// tty (#{pane_tty}). Close releases it.
func OpenTmuxPane(pid int, tty string) (*TmuxPane, error) {
	arch := linux.ArchFor(runtime.GOARCH)
	if arch == linux.ArchUnsupported {
		return nil, fmt.Errorf("%w: the /proc probe has no table for %s", ErrTmuxPaneUnsupported, runtime.GOARCH)
	}
	dev, err := linux.TerminalDevice(tty)
	if err != nil {
		return nil, err
	}
	slave, err := unix.Open(tty, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("testkit: open tmux pane terminal %s: %w", tty, err)
	}
	return &TmuxPane{pid: pid, term: linux.Terminal{Paths: []string{tty, "/dev/tty"}, Device: dev}, slave: slave, arch: arch}, nil
}

// Close releases the pane's terminal.
func (p *TmuxPane) Close() error { return unix.Close(p.slave) }

// shortWait is the longest own timeout of a wait that does not count as
// waiting for input: vim, after an Escape, waits in such slices for the
// rest of a possible key code and redraws only after them (actors/send.go
// looks past the same waits).
const shortWait = time.Second

// Ready reports whether the terminal's input queue is empty (every key
// read) and a thread of the foreground group is blocked reading the
// terminal in a wait that has no timeout or one longer than a second (a
// shorter one ends by itself, and the program may draw then); seen says
// what was found.
//
// The caller must have had an answer from tmux since it sent keys: tmux
// writes them to the pane on a later turn of its event loop than the
// send-keys command, and before it serves another client.
func (p *TmuxPane) Ready() (ok bool, seen string) {
	// poll, unlike TIOCINQ, first pushes what the master wrote into the
	// line discipline (see backend/local's inputConsumed).
	fds := []unix.PollFd{{Fd: int32(p.slave), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		return false, fmt.Sprintf("poll of the pane's terminal: %v", err)
	}
	if n > 0 {
		return false, "input not read yet"
	}
	st, err := linux.ReadStat(linux.FS{}, p.pid)
	if err != nil {
		return false, err.Error()
	}
	if st.TPGID <= 0 {
		return false, fmt.Sprintf("no foreground group (tpgid %d)", st.TPGID)
	}
	g, err := linux.ProbeGroup(linux.FS{}, linux.FS{}, p.arch, p.pid, st.TPGID, p.term)
	if err != nil {
		return false, err.Error()
	}
	seen = fmt.Sprintf("foreground group %d:", g.Pgid)
	for _, th := range g.Threads {
		switch {
		case !th.Waiting:
			seen += fmt.Sprintf(" %s/%d not waiting;", th.Comm, th.TID)
		case th.HasTimeout && th.Timeout <= shortWait:
			seen += fmt.Sprintf(" %s/%d in %v for %v (short);", th.Comm, th.TID, th.Call, th.Timeout)
		default:
			return true, fmt.Sprintf("%s/%d waits in %v", th.Comm, th.TID, th.Call)
		}
	}
	return false, seen
}
