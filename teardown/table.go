package teardown

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// table is the process table a teardown reads, as the linux.Stat values the
// walk and the checks work on: procfs on Linux and in fixtures (procTable),
// sysctl kern.proc on macOS (kinfoTable).
type table interface {
	// list returns every process, zombies included, sorted by pid. A
	// process reaped during the scan may be missing, or listed as it was
	// (on macOS with session -1); any other failure is an error, so a
	// walk never mistakes an unreadable process for an absent one.
	list() ([]linux.Stat, error)
	// stat returns pid's entry, or an error wrapping linux.ErrNotFound
	// when no process has the pid.
	stat(pid int) (linux.Stat, error)
	// hasEnv reports whether pid's environment holds the entry kv
	// exactly; false when it cannot be read.
	hasEnv(pid int, kv string) bool
}

// Identify returns the start identity of process pid, read from the host's
// process table, in the form Tree and ProcSignaler check: on Linux
// StartTime counts clock ticks after boot (/proc/<pid>/stat), on macOS
// microseconds since the Unix epoch (kinfo_proc p_starttime). A zombie
// still has its identity. A pid that names no process yields an error
// wrapping ErrGone; on other platforms Identify returns ErrUnsupported.
func Identify(pid int) (linux.Identity, error) {
	if !platformSupported {
		return linux.Identity{}, ErrUnsupported
	}
	if err := validPID(pid); err != nil {
		return linux.Identity{}, err
	}
	s, err := hostTable().stat(pid)
	if errors.Is(err, linux.ErrNotFound) {
		return linux.Identity{}, fmt.Errorf("%w: %w", ErrGone, err)
	}
	if err != nil {
		return linux.Identity{}, fmt.Errorf("teardown: identify pid %d: %w", pid, err)
	}
	return s.Identity(), nil
}

// tableFor returns the table that Options.Proc or ProcSignaler.Proc names:
// r read as a procfs, or the host's own table when r is nil.
func tableFor(r linux.ProcReader) table {
	if r == nil {
		return hostTable()
	}
	return procTable{r}
}

// procTable reads a procfs through a linux.ProcReader: the host's /proc
// (linux.FS{}) or a fixture tree.
type procTable struct{ r linux.ProcReader }

var _ table = procTable{}

func (p procTable) list() ([]linux.Stat, error) { return linux.ListStats(p.r) }

func (p procTable) stat(pid int) (linux.Stat, error) { return linux.ReadStat(p.r, pid) }

// hasEnv reads /proc/<pid>/environ: the environment the process was
// started with (or what it wrote over that block); a zombie's reads as
// empty.
func (p procTable) hasEnv(pid int, kv string) bool {
	b, err := p.r.ReadFile(strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for e := range bytes.SplitSeq(b, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

// hostProcfs reports whether tb reads the host's real /proc, the only
// table whose zombies may be the calling process's children to reap.
func hostProcfs(tb table) bool {
	p, ok := tb.(procTable)
	if !ok {
		return false
	}
	fs, ok := p.r.(linux.FS)
	return ok && fs.Root == ""
}
