package linux

import (
	"encoding/binary"
	"math"
	"time"
)

// waitTimeout reads the timeout a thread's wait call was given: how long it
// may block before it resumes on its own. ok is false for a wait without
// one (read, a negative poll timeout, a nil timespec) and for anything
// unreadable (a miss is never a guess: it is treated as no timeout). The
// value is the one passed at entry; the kernel does not update it while
// the thread sleeps.
func (p *prober) waitTimeout(pid int, call WaitCall, args [6]uint64) (time.Duration, bool) {
	ms := func(v uint64) (time.Duration, bool) {
		t := int32(v)
		if t < 0 {
			return 0, false
		}
		return time.Duration(t) * time.Millisecond, true
	}
	switch call {
	case CallPoll:
		return ms(args[2])
	case CallEpollWait, CallEpollPwait:
		return ms(args[3])
	case CallPpoll:
		return p.timespec(pid, args[2], time.Nanosecond)
	case CallPselect6:
		return p.timespec(pid, args[4], time.Nanosecond)
	case CallEpollPwait2:
		return p.timespec(pid, args[3], time.Nanosecond)
	case CallSelect:
		return p.timespec(pid, args[4], time.Microsecond) // a timeval
	}
	return 0, false
}

// timespec reads a {seconds, fraction} pair of 64-bit words (a timespec,
// or a timeval with unit Microsecond) from the process's memory.
func (p *prober) timespec(pid int, addr uint64, unit time.Duration) (time.Duration, bool) {
	if addr == 0 || p.m == nil {
		return 0, false
	}
	b, err := p.m.ReadMem(pid, addr, 16)
	if err != nil || len(b) < 16 {
		return 0, false
	}
	sec, frac := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || frac < 0 || sec > math.MaxInt32 {
		return 0, false
	}
	return time.Duration(sec)*time.Second + time.Duration(frac)*unit, true
}
