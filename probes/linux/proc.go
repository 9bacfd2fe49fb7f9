package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotFound reports that a process is gone: its /proc entry no longer
// exists (fs.ErrNotExist) or vanished while being read (ESRCH). Errors that
// wrap it also wrap the underlying cause.
var ErrNotFound = errors.New("linux: process not found")

// ErrUnsupported is returned by FS with the default root on systems without a
// Linux procfs.
var ErrUnsupported = errors.New("linux: procfs is unsupported on this platform")

// ProcReader abstracts /proc so fixtures can test every function. Paths are
// relative to the proc root, e.g. "123/stat"; "." names the root itself.
type ProcReader interface {
	ReadFile(path string) ([]byte, error)
	ReadLink(path string) (string, error)
	ReadDirNames(path string) ([]string, error)
}

// FS is a ProcReader over a procfs mount. Root "" means the real /proc; any
// other Root is read as an ordinary directory, which is how fixture trees are
// served.
type FS struct {
	// Root is the directory that plays the role of /proc.
	Root string
}

var _ ProcReader = FS{}

// ReadFile reads Root/path.
func (f FS) ReadFile(path string) ([]byte, error) {
	full, err := f.path(path)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(full)
}

// ReadLink reads the symlink Root/path.
func (f FS) ReadLink(path string) (string, error) {
	full, err := f.path(path)
	if err != nil {
		return "", err
	}
	return os.Readlink(full)
}

// ReadDirNames lists the entry names of the directory Root/path, unsorted.
func (f FS) ReadDirNames(path string) ([]string, error) {
	full, err := f.path(path)
	if err != nil {
		return nil, err
	}
	d, err := os.Open(full)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

func (f FS) path(p string) (string, error) {
	root := f.Root
	if root == "" {
		var err error
		if root, err = defaultRoot(); err != nil {
			return "", err
		}
	}
	return filepath.Join(root, p), nil
}

// gone wraps err with ErrNotFound when it says the process no longer exists.
// A /proc/<pid> directory disappears when the process is reaped (ENOENT), and
// a read that races the reap fails with ESRCH; both mean "gone", and callers
// such as teardown treat that as success rather than failure.
func gone(pid int, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%w: pid %d: %w", ErrNotFound, pid, err)
	}
	return fmt.Errorf("linux: pid %d: %w", pid, err)
}
