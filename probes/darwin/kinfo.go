package darwin

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// ErrNotFound reports that no process has the pid: it exited and was reaped.
// A zombie is still found (with Stat SZOMB).
var ErrNotFound = errors.New("darwin: process not found")

// Process states: p_stat in <sys/proc.h>.
const (
	SIDL   int8 = 1 // being created by fork
	SRUN   int8 = 2 // runnable
	SSLEEP int8 = 3 // sleeping
	SSTOP  int8 = 4 // stopped by a signal or a debugger
	SZOMB  int8 = 5 // exited, waiting to be reaped
)

// NoDev is Kinfo.TDev for a process without a controlling terminal (NODEV).
const NoDev int32 = -1

// Kinfo is one process as the kernel reports it through sysctl kern.proc
// (struct kinfo_proc), reduced to the fields the runtime uses, plus the
// session id, which kinfo_proc does not carry (its e_sess is a kernel
// address) and which ReadKinfo and ListKinfo take from getsid(2).
type Kinfo struct {
	// PID is p_pid.
	PID int
	// PPID is the parent pid, e_ppid.
	PPID int
	// PGID is the process group, e_pgid.
	PGID int
	// SID is the session id from getsid(2), called right after the
	// sysctl; -1 when the process was gone by then (getsid fails with
	// ESRCH), and 0 for pid 0, for which getsid would name the caller's
	// session.
	SID int
	// TPGID is the foreground process group of the controlling terminal,
	// e_tpgid; meaningless when TDev is NoDev.
	TPGID int
	// TDev is the controlling terminal's device, e_tdev, or NoDev.
	TDev int32
	// Stat is the state p_stat: SIDL, SRUN, SSLEEP, SSTOP or SZOMB.
	Stat int8
	// Start is when the process was forked, p_starttime, to the
	// microsecond; exec does not change it. With PID it tells a process
	// from a later one that reuses its pid (ps's lstart has whole
	// seconds only).
	Start time.Time
	// Comm is the command name, p_comm: at most 16 bytes (MAXCOMLEN).
	Comm string
}

// Alive reports whether the process can still run: a zombie only waits to
// be reaped.
func (k Kinfo) Alive() bool { return k.Stat != SZOMB }

// withSID fills in k.SID through getsid. The record and the getsid call are
// not atomic: if the process exits in between, getsid fails with ESRCH and
// SID is -1; if its pid is also reused in between, SID is the newcomer's.
// Either way a caller that checks the start identity before it acts on the
// process acts on nothing that is not the process it read.
func withSID(k Kinfo, getsid func(pid int) (int, error)) (Kinfo, error) {
	if k.PID == 0 {
		// kernel_task. getsid(0) means "the caller's session".
		k.SID = 0
		return k, nil
	}
	sid, err := getsid(k.PID)
	switch {
	case errors.Is(err, syscall.ESRCH):
		k.SID = -1
	case err != nil:
		return Kinfo{}, fmt.Errorf("darwin: getsid %d: %w", k.PID, err)
	default:
		k.SID = sid
	}
	return k, nil
}

// withSIDs is withSID over a whole table; the first failure fails it, so a
// caller walking the tree never mistakes an unreadable process for one in
// no session.
func withSIDs(ks []Kinfo, getsid func(pid int) (int, error)) ([]Kinfo, error) {
	out := make([]Kinfo, 0, len(ks))
	for _, k := range ks {
		k, err := withSID(k, getsid)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}
