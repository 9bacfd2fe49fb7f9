package sandbox

import "golang.org/x/sys/unix"

// seccompABIs: arm64 runs aarch64 natively (ioctl is 29) and, on kernels
// with CONFIG_COMPAT, 32-bit ARM EABI (arch/arm/tools/syscall.tbl: ioctl is
// 54). It has no x32-like ABI.
func seccompABIs() (native, compat seccompABI, x32Bit uint32, ok bool) {
	return seccompABI{arch: unix.AUDIT_ARCH_AARCH64, ioctl: unix.SYS_IOCTL},
		seccompABI{arch: unix.AUDIT_ARCH_ARM, ioctl: 54},
		0, true
}
