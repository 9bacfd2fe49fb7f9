//go:build linux

package teardown

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ptyactor/ptyactor/probes/linux"
)

const platformSupported = true

// Signal sends sig to id if, and only if, id.PID still has id's start
// identity.
func (p ProcSignaler) Signal(id linux.Identity, sig syscall.Signal) error {
	if err := validPID(id.PID); err != nil {
		return err
	}
	fd, err := unix.PidfdOpen(id.PID, 0)
	switch {
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		// ENOSYS: kernel before 5.3. pidfd_open has no permission check
		// of its own, so EPERM can only come from a seccomp filter that
		// does not know the call (older container runtimes); kill(2) is
		// still allowed there.
		return p.kill(id, sig)
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("%w: pid %d", ErrGone, id.PID)
	case err != nil:
		return fmt.Errorf("teardown: pidfd_open %d: %w", id.PID, err)
	}
	defer unix.Close(fd)
	// The pidfd pins whatever process held the pid at open time. Checking
	// the identity now proves the pinned process is ours; if it exits and
	// the pid is reused later, the pidfd still names the dead one and the
	// send fails with ESRCH instead of hitting the newcomer.
	if err := p.check(id); err != nil {
		return err
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("%w: pid %d", ErrGone, id.PID)
		}
		return fmt.Errorf("teardown: pidfd_send_signal %d %v: %w", id.PID, sig, err)
	}
	return nil
}
