//go:build !linux

package teardown

// BecomeSubreaper returns ErrUnsupported: child subreapers are a Linux
// feature.
func BecomeSubreaper() error { return ErrUnsupported }

// reapChild reaps nothing: Tree never runs here with the real procfs.
func reapChild(pid int) (bool, error) { return false, ErrUnsupported }
