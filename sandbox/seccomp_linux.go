//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// A program in the sandbox must not push input into its terminal: with
// ioctl(fd, TIOCSTI, "#") it can make the agent's next command a comment
// that "succeeds". bwrap's --seccomp installs the classic BPF filter built
// here just before it execs the shell, so it binds the shell and every
// process the shell starts (filters are inherited and cannot be removed).
//
// The filter sees a struct seccomp_data (linux/seccomp.h):
//
//	int   nr;                  offset 0
//	__u32 arch;                offset 4, an AUDIT_ARCH_ value
//	__u64 instruction_pointer; offset 8
//	__u64 args[6];             offset 16, 24, ...
//
// and classic BPF loads 32-bit words in the machine's byte order. Both
// supported architectures are little endian: the low word of args[1] is
// at 24, its high word at 28.
const (
	offNR       = 0
	offArch     = 4
	offArg1Low  = 16 + 8*1
	seccompDeny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

// seccompABI is one system call ABI the filter knows.
type seccompABI struct {
	arch  uint32 // seccomp_data.arch (AUDIT_ARCH_X86_64, ...)
	ioctl uint32 // ioctl's system call number in this ABI
}

// deniedIoctls are the requests that put input into a terminal: TIOCSTI
// (any tty) and TIOCLINUX (its paste subcode, on a virtual console), the
// pair flatpak refuses. Both have the same value on amd64 and arm64.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// seccompProgram returns the filter for native, the kernel's own ABI, and
// compat, the 32-bit ABI it also runs (arch 0: none). A native system call
// number at or above x32Bit (0: no such ABI) is refused outright: on amd64
// that is the x32 ABI, whose numbers carry __X32_SYSCALL_BIT and whose
// ioctl (514) would pass a check of the native number (16). The comparison
// is unsigned, so a negative number (-1) is refused too, with EPERM rather
// than ENOSYS.
//
//	     ld  [arch]
//	     jeq #native          else compat
//	     ld  [nr]
//	     jge #x32Bit          deny          (only when x32Bit != 0)
//	     jeq #native.ioctl    request       else allow
//	compat:
//	     jeq #compat.arch     else kill     (only when compat.arch != 0)
//	     ld  [nr]
//	     jeq #compat.ioctl    request       else allow
//	request:
//	     ld  [args[1] low word]
//	     jeq #TIOCSTI         deny
//	     jeq #TIOCLINUX       deny          else allow
//	allow: ret ALLOW
//	deny:  ret ERRNO(EPERM)
//	kill:  ret KILL_PROCESS
//
// The request is compared as the low 32 bits of args[1] only: ioctl's
// request is an unsigned int, so the kernel ignores the high word, and a
// filter that compared all 64 bits could be passed by setting one
// (CVE-2019-10063, the flatpak bypass).
//
// The compat ABI gets the same rule under its own ioctl number rather than
// being refused whole: a sandboxed command may well be a 32-bit binary, and
// refusing its every system call would break it for nothing. (A 64-bit
// program reaches the i386 ABI too, with int $0x80; the rule covers it.) An arch the
// kernel cannot produce on this machine kills the process: fail closed.
func seccompProgram(native, compat seccompABI, x32Bit uint32) []unix.SockFilter {
	var a asm
	a.ld(offArch)
	a.jeq(native.arch, next, "compat")
	a.ld(offNR)
	if x32Bit != 0 {
		a.jge(x32Bit, "deny", next)
	}
	a.jeq(native.ioctl, "request", "allow")
	a.label("compat")
	if compat.arch != 0 {
		a.jeq(compat.arch, next, "kill")
		a.ld(offNR)
		a.jeq(compat.ioctl, "request", "allow")
	} else {
		a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	}
	a.label("request")
	a.ld(offArg1Low)
	for i, req := range deniedIoctls {
		f := next
		if i == len(deniedIoctls)-1 {
			f = "allow"
		}
		a.jeq(req, "deny", f)
	}
	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("deny")
	a.ret(seccompDeny)
	a.label("kill")
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return a.resolve()
}

// next is the jump target "the following instruction".
const next = ""

// asm assembles a classic BPF program whose forward jumps name labels.
type asm struct {
	prog   []unix.SockFilter
	jumps  map[int][2]string // conditional jump index -> its true, false targets
	labels map[string]int
}

func (a *asm) ld(off uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *asm) ret(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

func (a *asm) jeq(k uint32, t, f string) { a.jump(unix.BPF_JEQ, k, t, f) }
func (a *asm) jge(k uint32, t, f string) { a.jump(unix.BPF_JGE, k, t, f) }

func (a *asm) jump(op uint16, k uint32, t, f string) {
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[len(a.prog)] = [2]string{t, f}
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

// resolve fills in the jump offsets. A bad label is a bug in
// seccompProgram, caught by its tests on every architecture.
func (a *asm) resolve() []unix.SockFilter {
	skip := func(from int, to string) uint8 {
		if to == next {
			return 0
		}
		at, ok := a.labels[to]
		if !ok || at <= from || at-from-1 > 255 {
			panic(fmt.Sprintf("sandbox: seccomp jump from %d to %q", from, to))
		}
		return uint8(at - from - 1)
	}
	for i, tf := range a.jumps {
		a.prog[i].Jt, a.prog[i].Jf = skip(i, tf[0]), skip(i, tf[1])
	}
	return a.prog
}

// encode returns prog as the kernel's struct sock_filter array, the format
// bwrap --seccomp reads: u16 code, u8 jt, u8 jf, u32 k, in the machine's
// byte order.
func encode(prog []unix.SockFilter) []byte {
	b := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		b = binary.NativeEndian.AppendUint16(b, in.Code)
		b = append(b, in.Jt, in.Jf)
		b = binary.NativeEndian.AppendUint32(b, in.K)
	}
	return b
}

// seccompFile returns a sealed memfd holding prog, positioned at its
// start, for bwrap --seccomp.
func seccompFile(prog []unix.SockFilter) (_ *os.File, err error) {
	fd, err := unix.MemfdCreate("ptyactor-seccomp", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "ptyactor-seccomp")
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	if _, err := f.Write(encode(prog)); err != nil {
		return nil, fmt.Errorf("sandbox: write the seccomp filter: %w", err)
	}
	// Sealed, so nothing holding the fd can change the filter bwrap reads.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return nil, fmt.Errorf("sandbox: seal the seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("sandbox: rewind the seccomp filter: %w", err)
	}
	return f, nil
}
