//go:build !linux && !darwin

package teardown

import (
	"syscall"

	"github.com/ptyactor/ptyactor/probes/linux"
)

const platformSupported = false

// Signal returns ErrUnsupported: without procfs the start identity cannot be
// checked, and signalling an unchecked pid could hit a recycled one.
func (p ProcSignaler) Signal(id linux.Identity, sig syscall.Signal) error {
	return ErrUnsupported
}
