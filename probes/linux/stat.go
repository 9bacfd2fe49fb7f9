package linux

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// ErrMalformed reports a /proc/<pid>/stat line that does not have the
// documented layout.
var ErrMalformed = errors.New("linux: malformed stat")

// Stat holds the fields of /proc/<pid>/stat that the runtime uses.
type Stat struct {
	PID     int
	PPID    int
	PGRP    int
	Session int
	// TPGID is the foreground process group of the controlling terminal, or
	// -1 when the process has none.
	TPGID int
	// State is the one-letter state: R, S, D, T, t, Z, X, x, ...
	State byte
	// StartTime is the start time in clock ticks after boot. Together with
	// PID it identifies a process across pid reuse.
	StartTime uint64
	// Comm is the command name, up to 15 bytes; it may contain spaces and
	// parentheses.
	Comm string
	// Threads is the number of threads in the process (num_threads). A
	// leader whose own thread exited reads as a zombie while its other
	// threads run on: Threads is the only sign that it is alive.
	Threads int
}

// Identity names one process for its whole life: a pid alone can be recycled
// once the process is reaped, but (pid, starttime) cannot repeat.
type Identity struct {
	PID       int
	StartTime uint64
}

// Identity returns the start identity of the process.
func (s Stat) Identity() Identity { return Identity{PID: s.PID, StartTime: s.StartTime} }

// Alive reports whether the process can still run: zombies (Z) and dead
// tasks (X, x) only wait to be reaped. A zombie leader with other threads is
// alive: its main thread called exit (pthread_exit) and the rest of the
// process runs on; SIGKILL to its pid still ends them all, and only then can
// it be reaped.
func (s Stat) Alive() bool {
	switch s.State {
	case 'Z':
		return s.Threads > 1
	case 'X', 'x':
		return false
	}
	return true
}

// Reapable reports whether the process has exited for good: a zombie whose
// threads are all gone, which its parent's wait can take.
func (s Stat) Reapable() bool { return s.State == 'Z' && s.Threads <= 1 }

// Field positions after the closing parenthesis of comm, counted from 0
// (proc(5) numbers them from 1 starting at pid: state is field 3).
const (
	fieldState     = 0
	fieldPPID      = 1
	fieldPGRP      = 2
	fieldSession   = 3
	fieldTPGID     = 5
	fieldThreads   = 17
	fieldStartTime = 19
)

// ParseStat parses the contents of /proc/<pid>/stat. The comm field is split
// off at the LAST ')' because a process may name itself anything, including
// "a) R 1 2 (": only the last parenthesis is guaranteed to be ours.
func ParseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Stat{}, malformed(b, "no (comm)")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return Stat{}, malformed(b, "bad pid")
	}
	rest := bytes.Fields(b[closing+1:])
	if len(rest) <= fieldStartTime {
		return Stat{}, malformed(b, "too few fields")
	}
	if len(rest[fieldState]) != 1 {
		return Stat{}, malformed(b, "bad state")
	}
	s := Stat{PID: pid, State: rest[fieldState][0], Comm: string(b[open+1 : closing])}
	ints := []struct {
		dst   *int
		field int
	}{
		{&s.PPID, fieldPPID},
		{&s.PGRP, fieldPGRP},
		{&s.Session, fieldSession},
		{&s.TPGID, fieldTPGID},
		{&s.Threads, fieldThreads},
	}
	for _, f := range ints {
		if *f.dst, err = strconv.Atoi(string(rest[f.field])); err != nil {
			return Stat{}, malformed(b, "bad integer field")
		}
	}
	if s.StartTime, err = strconv.ParseUint(string(rest[fieldStartTime]), 10, 64); err != nil {
		return Stat{}, malformed(b, "bad starttime")
	}
	return s, nil
}

func malformed(b []byte, why string) error {
	const limit = 64
	if len(b) > limit {
		b = b[:limit]
	}
	return fmt.Errorf("%w (%s): %q", ErrMalformed, why, b)
}

// ReadStat reads and parses /proc/<pid>/stat. A process that is gone yields
// an error wrapping ErrNotFound.
func ReadStat(r ProcReader, pid int) (Stat, error) {
	b, err := r.ReadFile(strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, gone(pid, err)
	}
	s, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("linux: pid %d: %w", pid, err)
	}
	if s.PID != pid {
		// A fixture or a bind mount that serves the wrong file must not
		// make one process stand in for another.
		return Stat{}, fmt.Errorf("linux: pid %d: %w", pid, malformed(b, "pid mismatch"))
	}
	return s, nil
}

// ListStats reads the stat of every numeric entry of the proc root, sorted by
// pid. Processes that exit while the table is being scanned are skipped; any
// other failure is returned, because a caller walking the tree must not
// mistake an unreadable process for an absent one.
func ListStats(r ProcReader) ([]Stat, error) {
	names, err := r.ReadDirNames(".")
	if err != nil {
		return nil, fmt.Errorf("linux: list processes: %w", err)
	}
	stats := make([]Stat, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 || strconv.Itoa(pid) != name {
			continue // "self", "meminfo", ...
		}
		s, err := ReadStat(r, pid)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		stats = append(stats, s)
	}
	slices.SortFunc(stats, func(a, b Stat) int { return a.PID - b.PID })
	return stats, nil
}
