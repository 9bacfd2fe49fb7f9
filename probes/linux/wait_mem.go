package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
)

// MemReader reads another process's memory. FS implements it with
// /proc/<pid>/mem, which needs ptrace access to the target: the same uid (and
// no Yama restriction) or an ancestor such as the runtime that spawned the
// session.
type MemReader interface {
	// ReadMem returns exactly n bytes at addr in the address space of pid,
	// or an error.
	ReadMem(pid int, addr uint64, n int) ([]byte, error)
}

var _ MemReader = FS{}

// errBadRange reports a read that /proc/<pid>/mem cannot express.
var errBadRange = errors.New("linux: bad memory range")

// ReadMem reads n bytes at addr from Root/<pid>/mem with one pread. An
// unmapped address fails (EIO), as does a short read.
func (f FS) ReadMem(pid int, addr uint64, n int) ([]byte, error) {
	if n < 0 || addr > math.MaxInt64 || uint64(n) > math.MaxInt64-addr {
		return nil, fmt.Errorf("linux: pid %d: read %d bytes at %#x: %w", pid, n, addr, errBadRange)
	}
	full, err := f.path(strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil, err
	}
	b, err := preadFile(full, int64(addr), n)
	if err != nil {
		return nil, gone(pid, &fs.PathError{Op: "pread", Path: full, Err: err})
	}
	return b, nil
}
