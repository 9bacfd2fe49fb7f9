package sandbox

import "golang.org/x/sys/unix"

// seccompABIs: amd64 runs x86_64 natively, x32 (native arch, numbers from
// __X32_SYSCALL_BIT up) and i386 (arch/x86/entry/syscalls/syscall_32.tbl:
// ioctl is 54).
func seccompABIs() (native, compat seccompABI, x32Bit uint32, ok bool) {
	return seccompABI{arch: unix.AUDIT_ARCH_X86_64, ioctl: unix.SYS_IOCTL},
		seccompABI{arch: unix.AUDIT_ARCH_I386, ioctl: 54},
		0x40000000, true
}
