package teardown

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ptyactor/ptyactor/probes/darwin"
	"github.com/ptyactor/ptyactor/probes/linux"
)

// kinfoSource yields macOS's kernel process records: sysctlSource on
// macOS, fixtures in tests.
type kinfoSource interface {
	// all returns every process, zombies included, with session ids.
	all() ([]darwin.Kinfo, error)
	// read returns pid's record, or an error wrapping darwin.ErrNotFound.
	read(pid int) (darwin.Kinfo, error)
}

// sysctlSource reads the records through sysctl kern.proc (probes/darwin);
// outside macOS every call fails with darwin.ErrUnsupported.
type sysctlSource struct{}

func (sysctlSource) all() ([]darwin.Kinfo, error) { return darwin.ListKinfo() }

func (sysctlSource) read(pid int) (darwin.Kinfo, error) { return darwin.ReadKinfo(pid) }

// kinfoTable is the process table over kinfo_proc records: macOS's. Each
// record is decoded by statOf.
type kinfoTable struct{ src kinfoSource }

var _ table = kinfoTable{}

func (k kinfoTable) list() ([]linux.Stat, error) {
	recs, err := k.src.all()
	if err != nil {
		return nil, err
	}
	stats := make([]linux.Stat, 0, len(recs))
	for _, r := range recs {
		if r.PID <= 0 {
			continue // kernel_task; procfs lists no pid 0 either
		}
		stats = append(stats, statOf(r))
	}
	slices.SortFunc(stats, func(a, b linux.Stat) int { return a.PID - b.PID })
	return stats, nil
}

func (k kinfoTable) stat(pid int) (linux.Stat, error) {
	r, err := k.src.read(pid)
	switch {
	case errors.Is(err, darwin.ErrNotFound):
		return linux.Stat{}, fmt.Errorf("%w: pid %d: %w", linux.ErrNotFound, pid, err)
	case err != nil:
		return linux.Stat{}, fmt.Errorf("teardown: pid %d: %w", pid, err)
	case r.PID != pid:
		// A record for another process must never stand in for pid.
		return linux.Stat{}, fmt.Errorf("teardown: pid %d: the kernel answered for pid %d", pid, r.PID)
	}
	return statOf(r), nil
}

// hasEnv is always false: adoption needs a child subreaper, which macOS
// lacks (BecomeSubreaper returns ErrUnsupported), so no macOS process is
// ever taken on its environment.
func (kinfoTable) hasEnv(int, string) bool { return false }

// statOf decodes a kinfo record into the view Tree works on:
//   - State is ps(1)'s letter for p_stat: a stopped process is 'T' (Tree
//     continues it after SIGTERM), a zombie 'Z' (it counts as gone), and
//     an unknown state '?', which counts as running.
//   - StartTime is p_starttime in microseconds since the Unix epoch, the
//     start identity's unit on macOS.
//   - Session is the record's SID: -1 when getsid found the process gone,
//     so it joins no session.
//   - TPGID is -1 without a controlling terminal, as in procfs.
func statOf(k darwin.Kinfo) linux.Stat {
	s := linux.Stat{
		PID:       k.PID,
		PPID:      k.PPID,
		PGRP:      k.PGID,
		Session:   k.SID,
		TPGID:     k.TPGID,
		State:     stateLetter(k.Stat),
		StartTime: startMicros(k.Start),
		Comm:      k.Comm,
	}
	if k.TDev == darwin.NoDev {
		s.TPGID = -1
	}
	return s
}

func stateLetter(st int8) byte {
	switch st {
	case darwin.SIDL, darwin.SRUN:
		return 'R'
	case darwin.SSLEEP:
		return 'S'
	case darwin.SSTOP:
		return 'T'
	case darwin.SZOMB:
		return 'Z'
	}
	return '?'
}

// startMicros is t in microseconds since the Unix epoch. The conversion
// keeps distinct times distinct, which is all an identity needs.
func startMicros(t time.Time) uint64 { return uint64(t.UnixMicro()) }
