//go:build !linux

package teardown

import linux "github.com/ptyactor/ptyactor/probes/linux"

// BecomeSubreaper returns ErrUnsupported: child subreapers are a Linux
// feature.
func BecomeSubreaper() error { return ErrUnsupported }

// reapChild reaps nothing: Tree reaps only through the real /proc, which
// this platform lacks.
func reapChild(pid int) (bool, error) { return false, ErrUnsupported }

// ReapMembers returns ErrUnsupported: nothing is adopted here.
func ReapMembers(linux.ProcReader, func(sid int) bool) ([]int, error) {
	return nil, ErrUnsupported
}
