//go:build darwin

package darwin

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// ReadKinfo returns pid's record (sysctl kern.proc.pid.<pid>) with its
// session id. A pid that names no process yields an error wrapping
// ErrNotFound; a zombie is found, with Stat SZOMB.
func ReadKinfo(pid int) (Kinfo, error) {
	if pid < 0 {
		return Kinfo{}, fmt.Errorf("%w: pid %d", ErrNotFound, pid)
	}
	// The slice form reports a missing pid as an empty result; the
	// single-record form reports it as EIO, which a real I/O error would
	// also be.
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil {
		return Kinfo{}, fmt.Errorf("darwin: sysctl kern.proc.pid.%d: %w", pid, err)
	}
	if len(kps) == 0 {
		return Kinfo{}, fmt.Errorf("%w: pid %d", ErrNotFound, pid)
	}
	k := fromKinfoProc(&kps[0])
	if k.PID != pid {
		return Kinfo{}, fmt.Errorf("darwin: sysctl kern.proc.pid.%d returned pid %d", pid, k.PID)
	}
	return withSID(k, unix.Getsid)
}

// ListKinfo returns every process (sysctl kern.proc.all), zombies and pid 0
// included, each with its session id, in the kernel's order.
func ListKinfo() ([]Kinfo, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("darwin: sysctl kern.proc.all: %w", err)
	}
	ks := make([]Kinfo, len(kps))
	for i := range kps {
		ks[i] = fromKinfoProc(&kps[i])
	}
	return withSIDs(ks, unix.Getsid)
}

func fromKinfoProc(kp *unix.KinfoProc) Kinfo {
	return Kinfo{
		PID:   int(kp.Proc.P_pid),
		PPID:  int(kp.Eproc.Ppid),
		PGID:  int(kp.Eproc.Pgid),
		TPGID: int(kp.Eproc.Tpgid),
		TDev:  kp.Eproc.Tdev,
		Stat:  kp.Proc.P_stat,
		Start: time.Unix(kp.Proc.P_starttime.Sec, int64(kp.Proc.P_starttime.Usec)*int64(time.Microsecond)),
		Comm:  unix.ByteSliceToString(kp.Proc.P_comm[:]),
	}
}
