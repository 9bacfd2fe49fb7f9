//go:build linux

package local

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the started process pid has exited, so that
// cmd.Wait then reaps it without blocking. It waits on a pidfd in the
// runtime poller: exec.Cmd.Wait alone blocks in waitid, and a goroutine
// blocked in a system call holds an OS thread (with its own g0 and signal
// stacks) for as long as the session lives, so every idle session would
// cost the host a thread. pid is our unreaped child, so it cannot name
// another process yet. If no pidfd can be had, it returns at once and Wait
// blocks as before.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	// Non-blocking, so os.NewFile registers it with the poller.
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// A pidfd polls readable once its process has exited.
	_ = rc.Read(func(fd uintptr) bool {
		exited, err := pollIn(int(fd))
		return exited || err != nil
	})
}
