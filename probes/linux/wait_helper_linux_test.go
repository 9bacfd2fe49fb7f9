//go:build linux

package linux

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary a scripted child (see TestMain).
const helperEnv = "PTYACTOR_PROBE_HELPER"

// runHelper runs the helper named by helperEnv and exits, or returns false
// in an ordinary test run.
func runHelper() bool {
	switch h := os.Getenv(helperEnv); h {
	case "":
		return false
	case "epoll_pwait2":
		err := epollPwait2Stdin()
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", h)
		os.Exit(2)
	}
	return true
}

// epollPwait2Stdin waits for stdin in epoll_pwait2 with no timeout, as no
// libc call does yet, until the process is killed.
func epollPwait2Stdin() error {
	runtime.LockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, 0, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: 0}); err != nil {
		return err
	}
	var ev [1]unix.EpollEvent
	for {
		_, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), 1, 0, 0, 0)
		if errno != 0 && errno != unix.EINTR {
			return errno
		}
		var b [256]byte
		if _, err := unix.Read(0, b[:]); err != nil {
			return err
		}
	}
}
