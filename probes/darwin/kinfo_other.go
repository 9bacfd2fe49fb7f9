//go:build !darwin

package darwin

// ReadKinfo returns ErrUnsupported outside macOS: sysctl kern.proc is
// macOS's (Linux has /proc).
func ReadKinfo(pid int) (Kinfo, error) { return Kinfo{}, ErrUnsupported }

// ListKinfo returns ErrUnsupported outside macOS.
func ListKinfo() ([]Kinfo, error) { return nil, ErrUnsupported }
