package linux

import "strconv"

// Arch selects the syscall table used to decode /proc/<pid>/task/<tid>/syscall.
// The numbers come from the kernel UAPI: arch/x86/entry/syscalls/syscall_64.tbl
// for x86_64 and include/uapi/asm-generic/unistd.h for arm64. Every other
// architecture is ArchUnsupported, on which nothing is ever found waiting.
type Arch int

const (
	// ArchUnsupported has no table: the exact tier is skipped.
	ArchUnsupported Arch = iota
	// ArchAMD64 is x86_64 (64-bit ABI only; x32 numbers carry bit 30 and
	// are not in the table).
	ArchAMD64
	// ArchARM64 is aarch64, which uses the asm-generic table.
	ArchARM64
)

// ArchFor maps a GOARCH value (runtime.GOARCH) to its table.
func ArchFor(goarch string) Arch {
	switch goarch {
	case "amd64":
		return ArchAMD64
	case "arm64":
		return ArchARM64
	}
	return ArchUnsupported
}

// String returns the GOARCH spelling, or "unsupported".
func (a Arch) String() string {
	switch a {
	case ArchAMD64:
		return "amd64"
	case ArchARM64:
		return "arm64"
	}
	return "unsupported"
}

// WaitCall is a syscall in which a thread can block waiting for input.
type WaitCall int

const (
	// CallNone is the zero value: no known wait call.
	CallNone WaitCall = iota
	// The others are named after the syscall (see String).
	CallRead
	CallReadv
	CallSelect
	CallPselect6
	CallPoll
	CallPpoll
	CallEpollWait
	CallEpollPwait
	CallEpollPwait2
)

var callNames = [...]string{
	CallNone:        "none",
	CallRead:        "read",
	CallReadv:       "readv",
	CallSelect:      "select",
	CallPselect6:    "pselect6",
	CallPoll:        "poll",
	CallPpoll:       "ppoll",
	CallEpollWait:   "epoll_wait",
	CallEpollPwait:  "epoll_pwait",
	CallEpollPwait2: "epoll_pwait2",
}

// String returns the kernel's name of the syscall.
func (c WaitCall) String() string {
	if c >= 0 && int(c) < len(callNames) {
		return callNames[c]
	}
	return "WaitCall(" + strconv.Itoa(int(c)) + ")"
}

// amd64Calls is from arch/x86/entry/syscalls/syscall_64.tbl (ABI "common"
// or "64"). select, poll and epoll_wait exist only here.
var amd64Calls = map[int64]WaitCall{
	0:   CallRead,
	7:   CallPoll,
	19:  CallReadv,
	23:  CallSelect,
	232: CallEpollWait,
	270: CallPselect6,
	271: CallPpoll,
	281: CallEpollPwait,
	441: CallEpollPwait2,
}

// arm64Calls is from include/uapi/asm-generic/unistd.h, which has no
// select, poll or epoll_wait: libc implements them with pselect6, ppoll and
// epoll_pwait.
var arm64Calls = map[int64]WaitCall{
	22:  CallEpollPwait,
	63:  CallRead,
	65:  CallReadv,
	72:  CallPselect6,
	73:  CallPpoll,
	441: CallEpollPwait2,
}

// Lookup decodes a syscall number. It reports false for numbers that are not
// wait calls and for every number on ArchUnsupported.
func (a Arch) Lookup(nr int64) (WaitCall, bool) {
	var c WaitCall
	switch a {
	case ArchAMD64:
		c = amd64Calls[nr]
	case ArchARM64:
		c = arm64Calls[nr]
	}
	return c, c != CallNone
}
