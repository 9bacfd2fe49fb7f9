//go:build !linux

package local

import (
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// terminalPaths: other platforms have no exact tier.
func terminalPaths(*session) (linux.Terminal, error) { return linux.Terminal{}, nil }

func openSlave(linux.Terminal) int { return -1 }

func closeSlave(int) {}

type waiterCache struct{}

func newWaiterCache(linux.Terminal) *waiterCache { return &waiterCache{} }

func (*waiterCache) Close() {}

// secretMode reports whether the terminal reads a line with echo off (a
// password prompt). Here the master's termios is the terminal's.
func (s *session) secretMode() bool {
	var secret bool
	_ = control(s.master, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
		secret = err == nil && t.Lflag&unix.ICANON != 0 && t.Lflag&unix.ECHO == 0
		return err
	})
	return secret
}
