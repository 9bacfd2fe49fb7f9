//go:build linux

package teardown

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process orphaned anywhere below it re-parents
// to it instead of to init, so Options.AdoptTag can find daemons that left
// their session. The setting is process-wide and lasts for the life of the
// process; calling it again is harmless. The caller then owns every orphan
// it adopts and must reap them; Tree reaps the members it adopted.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("teardown: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// reapChild reaps pid if it is a zombie child of the calling process. It
// waits for that one pid only, never -1, so it cannot take the exit status
// of a child os/exec is waiting for. It reports false when there was
// nothing to reap (not our child, or not exited yet).
func reapChild(pid int) (bool, error) {
	if err := validPID(pid); err != nil {
		return false, err
	}
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("teardown: wait4 %d: %w", pid, err)
		}
		return got == pid, nil
	}
}
