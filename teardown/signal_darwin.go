//go:build darwin

package teardown

import (
	"syscall"

	"github.com/ptyactor/ptyactor/probes/linux"
)

const platformSupported = true

// Signal sends sig to id if id.PID still has id's start identity. macOS has
// no pidfds, so this is check-then-kill(2): the start time is read through
// sysctl kern.proc (to the microsecond) right before kill. The residual
// window is those two system calls: the process would have to exit, be
// reaped and have its pid handed to a new process in between (the kernel
// hands out pids in sequence up to 99999 before it wraps), and then the
// newcomer would get the signal.
func (p ProcSignaler) Signal(id linux.Identity, sig syscall.Signal) error {
	return p.kill(id, sig)
}
