//go:build linux

package local

import (
	"fmt"
	"runtime"

	"github.com/ptyactor/ptyactor/backend"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

var _ backend.StdinProber = (*session)(nil)

var hostArch = linux.ArchFor(runtime.GOARCH)

// terminalPaths names what counts as this session's terminal when a fd is
// resolved: its pts by device identity (so a sandbox's own devpts instance,
// whose pts numbers repeat the host's, never matches, while bwrap's bind
// of this pts on /dev/console does), and /dev/tty (less reads the terminal
// there). The paths are the fallback where descriptors cannot be stat'ed.
func terminalPaths(s *session) (linux.Terminal, error) {
	var n int
	err := control(s.master, func(fd int) error {
		var err error
		n, err = unix.IoctlGetInt(fd, unix.TIOCGPTN)
		return err
	})
	if err != nil {
		return linux.Terminal{}, fmt.Errorf("pts number: %w", err)
	}
	pts := fmt.Sprintf("/dev/pts/%d", n)
	dev, err := linux.TerminalDevice(pts)
	if err != nil {
		return linux.Terminal{}, fmt.Errorf("pts identity: %w", err)
	}
	return linux.Terminal{Paths: []string{pts, "/dev/tty"}, Device: dev}, nil
}

// ProbeStdin observes the foreground group from /proc.
func (s *session) ProbeStdin() (backend.StdinObservation, error) {
	if hostArch == linux.ArchUnsupported || len(s.term.Paths) == 0 {
		return backend.StdinObservation{}, nil
	}
	pgid, err := s.Foreground()
	if err != nil {
		return backend.StdinObservation{}, err
	}
	obs := backend.StdinObservation{Supported: true, Pgid: pgid, Shell: pgid == s.PID(), InputSeq: s.stream.inputs()}
	// Cheapest facts first: while input is unread or output is pending the
	// answer is "not yet", and the /proc walk (tens of microseconds) is
	// skipped. A REPL echoing its input triggers many such looks.
	if obs.InputConsumed = s.inputConsumed(); !obs.InputConsumed {
		return obs, nil
	}
	seq, drained := s.drained()
	if !drained {
		return obs, nil
	}
	// The thread that waited last time usually waits again (a REPL goes
	// back to the same read): a few preads on its held /proc files prove
	// it without walking the shell's tree.
	if w, ok := s.follow.Recheck(pgid); ok {
		obs.Waiting, obs.Reader, obs.ReaderTID = true, w.Comm, w.TID
		obs.Waiters = map[int]uint64{w.TID: w.Switches}
		obs.WaitTimeout, obs.HasWaitTimeout = w.Timeout, w.HasTimeout
	} else if err := s.probeGroup(pgid, &obs); err != nil {
		return backend.StdinObservation{}, err
	}
	if obs.Waiting {
		obs.Secret = s.secretMode()
	}
	// Drained before and after the look, with no read completing in
	// between: the viewport then holds everything written before the wait.
	seq2, drained2 := s.drained()
	obs.Drained = drained && drained2 && seq == seq2
	return obs, nil
}

// probeGroup walks the foreground group and follows the waiter it finds.
func (s *session) probeGroup(pgid int, obs *backend.StdinObservation) error {
	g, err := linux.ProbeGroup(linux.FS{}, linux.FS{}, hostArch, s.PID(), pgid, s.term)
	if err != nil {
		return err
	}
	obs.EventLoop = true
	for _, t := range g.Threads {
		if t.Waiting {
			switch t.Call {
			case linux.CallEpollWait, linux.CallEpollPwait, linux.CallEpollPwait2:
			default:
				obs.EventLoop = false
			}
			if obs.Waiters == nil {
				obs.Waiters = map[int]uint64{}
			}
			obs.Waiters[t.TID] = t.Switches
		}
	}
	if w, ok := g.Waiting(); ok {
		obs.Waiting, obs.Reader, obs.ReaderTID = true, w.Comm, w.TID
		obs.WaitTimeout, obs.HasWaitTimeout = w.Timeout, w.HasTimeout
		s.follow.Track(w)
	}
	return nil
}

// waiterCache is the follower of the last thread seen waiting.
type waiterCache = linux.Follower

func newWaiterCache(t linux.Terminal) *waiterCache { return linux.NewFollower(hostArch, t) }

// inputConsumed polls the slave side for readable input. Polling the
// slave also flushes the PTY's pending work, so input written a moment ago
// is counted even if the line discipline had not received it yet.
func (s *session) inputConsumed() bool {
	s.slave.mu.RLock()
	defer s.slave.mu.RUnlock()
	if s.slave.fd < 0 {
		return false
	}
	readable, err := pollIn(s.slave.fd)
	return err == nil && !readable
}

// secretMode reports whether the terminal reads a line with echo off
// (ICANON on, ECHO off): a password prompt. One ioctl on our handle on the
// pts; unreadable means no.
func (s *session) secretMode() bool {
	s.slave.mu.RLock()
	defer s.slave.mu.RUnlock()
	if s.slave.fd < 0 {
		return false
	}
	t, err := unix.IoctlGetTermios(s.slave.fd, unix.TCGETS)
	return err == nil && t.Lflag&unix.ICANON != 0 && t.Lflag&unix.ECHO == 0
}

// openSlave opens a second handle on the session's pts for inputConsumed:
// no controlling-terminal side effects, never read.
func openSlave(t linux.Terminal) int {
	if len(t.Paths) == 0 {
		return -1
	}
	fd, err := unix.Open(t.Paths[0], unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closeSlave(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// drained reports whether every byte the program wrote has been read from
// the master and parsed, and the pump's read state it saw. The master must
// be empty (a poll, which flushes the PTY's pending work first, unlike
// TIOCINQ) between two reads of an even, unchanged readState: no read was
// in flight, so none took bytes that are not parsed yet.
func (s *session) drained() (uint64, bool) {
	st := s.readState.Load()
	if st&1 != 0 {
		return st, false
	}
	readable := true
	err := control(s.master, func(fd int) error {
		var err error
		readable, err = pollIn(fd)
		return err
	})
	return st, err == nil && !readable && s.readState.Load() == st
}

// pollIn reports whether fd has input now, without waiting.
func pollIn(fd int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return n > 0, err
	}
}
