package teardown

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// Signaler delivers one signal to one process.
//
// Signal must never signal a pid whose start identity no longer matches id,
// and returns an error wrapping ErrGone when the process is already gone (or
// its pid was reused), which Tree does not count as a failure.
type Signaler interface {
	Signal(id linux.Identity, sig syscall.Signal) error
}

// ProcSignaler is the default Signaler. On Linux it opens a pidfd for the
// pid, confirms through Proc that the pid still has the expected start time,
// and signals through the pidfd, so the process checked is the process
// signalled even if the pid is recycled in between. Kernels without pidfds
// fall back to check-then-kill(2), which leaves a narrow reuse window. macOS
// has no pidfds: there it always checks (through sysctl kern.proc), then
// kills, with the same narrow window.
type ProcSignaler struct {
	// Proc is the procfs start identities are checked in (tests pass
	// fixture trees). Nil means the host's table, as for Options.Proc.
	Proc linux.ProcReader
}

var _ Signaler = ProcSignaler{}

// check confirms that id.PID still names the process id describes.
func (p ProcSignaler) check(id linux.Identity) error {
	s, err := tableFor(p.Proc).stat(id.PID)
	if errors.Is(err, linux.ErrNotFound) {
		return fmt.Errorf("%w: pid %d", ErrGone, id.PID)
	}
	if err != nil {
		return fmt.Errorf("teardown: verify pid %d: %w", id.PID, err)
	}
	if s.StartTime != id.StartTime {
		return fmt.Errorf("%w: pid %d was reused (start %d, want %d)", ErrGone, id.PID, s.StartTime, id.StartTime)
	}
	return nil
}

// validPID refuses pids that kill(2) would widen into a group or broadcast.
func validPID(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("teardown: refusing to signal pid %d: %w", pid, ErrInvalidPID)
	}
	return nil
}
