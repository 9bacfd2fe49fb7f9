package linux

import (
	"bytes"
	"fmt"
	"strconv"
)

// SyscallLine is a parsed /proc/<pid>/task/<tid>/syscall.
//
// The kernel prints "running" for a task that is on a CPU or runnable,
// "<nr> <sp> <pc>" with a negative nr for a blocked task that is not in a
// syscall, and "<nr> <a0> ... <a5> <sp> <pc>" (arguments, stack pointer and
// program counter in hex) for a task blocked in syscall nr.
type SyscallLine struct {
	// Running reports the "running" form; nothing else is set.
	Running bool
	// Nr is the syscall number, negative when the task is not in a syscall.
	Nr int64
	// Args are the six raw argument registers (zero when Nr < 0).
	Args [6]uint64
	// SP and PC are the user stack pointer and program counter.
	SP, PC uint64
}

// ParseSyscall parses the contents of /proc/<pid>/task/<tid>/syscall.
// Anything but the three documented forms is an error wrapping ErrMalformed.
func ParseSyscall(b []byte) (SyscallLine, error) {
	f := blankFields(b)
	if len(f) == 1 && string(f[0]) == "running" {
		return SyscallLine{Running: true}, nil
	}
	if len(f) == 0 {
		return SyscallLine{}, malformedSyscall(b, "empty")
	}
	nr, err := strconv.ParseInt(string(f[0]), 10, 64)
	// The kernel prints a sign only on a negative nr ("%d"): "+5" and "-0"
	// are not its output.
	if err != nil || f[0][0] == '+' || (f[0][0] == '-') != (nr < 0) {
		return SyscallLine{}, malformedSyscall(b, "bad number")
	}
	var l SyscallLine
	l.Nr = nr
	var regs []*uint64
	switch {
	case nr < 0 && len(f) == 3:
		regs = []*uint64{&l.SP, &l.PC}
	case nr >= 0 && len(f) == 9:
		regs = []*uint64{&l.Args[0], &l.Args[1], &l.Args[2], &l.Args[3], &l.Args[4], &l.Args[5], &l.SP, &l.PC}
	default:
		return SyscallLine{}, malformedSyscall(b, "wrong field count")
	}
	for i, dst := range regs {
		hex, ok := bytes.CutPrefix(f[i+1], []byte("0x"))
		if !ok {
			return SyscallLine{}, malformedSyscall(b, "register without 0x")
		}
		if *dst, err = strconv.ParseUint(string(hex), 16, 64); err != nil {
			return SyscallLine{}, malformedSyscall(b, "bad register")
		}
	}
	return l, nil
}

// blankFields splits a line the kernel wrote on ASCII blanks only.
// bytes.Fields would also split on Unicode spaces (U+00A0, U+2000, ...),
// which the kernel never prints: a line holding one is malformed, not a
// differently spaced positive.
func blankFields(b []byte) [][]byte {
	return bytes.FieldsFunc(b, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
	})
}

func malformedSyscall(b []byte, why string) error {
	const limit = 96
	if len(b) > limit {
		b = b[:limit]
	}
	return fmt.Errorf("%w: syscall line (%s): %q", ErrMalformed, why, b)
}

// readSyscall reads and parses the syscall file of one thread.
func readSyscall(r ProcReader, task string) (SyscallLine, error) {
	read := r.ReadFile
	if f, ok := r.(sharedReader); ok {
		read = f.readShared // ParseSyscall keeps nothing of b
	}
	b, err := read(task + "/syscall")
	if err != nil {
		return SyscallLine{}, err
	}
	return ParseSyscall(b)
}
