//go:build linux || darwin

package teardown

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// kill checks id's start identity, then sends sig with kill(2). A pid
// recycled between the two steps would be hit; pidfds exist to close that
// window, so on Linux this path is taken only when they are missing
// (kernels before 5.3). macOS has no pidfds and always takes it.
func (p ProcSignaler) kill(id linux.Identity, sig syscall.Signal) error {
	if err := validPID(id.PID); err != nil {
		return err
	}
	if err := p.check(id); err != nil {
		return err
	}
	if err := unix.Kill(id.PID, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("%w: pid %d", ErrGone, id.PID)
		}
		return fmt.Errorf("teardown: kill %d %v: %w", id.PID, sig, err)
	}
	return nil
}
