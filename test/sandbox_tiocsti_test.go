//go:build linux

package test

// Issue 21, item 6: a program in a sandboxed session must not push input
// into its terminal. With ioctl(0, TIOCSTI, "#") it would make the agent's
// next command a comment that reports exit 0. The sandbox's seccomp filter
// refuses it with EPERM; this checks that on real bubblewrap and a real
// PTY, with the request as the kernel reads it.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/sandbox"
)

// helperIoctl makes this binary (helperVar=ioctl) the ioctl helper.
const helperIoctl = "ioctl"

func init() {
	if os.Getenv(helperVar) == helperIoctl {
		os.Exit(ioctlMain(os.Args[1:]))
	}
}

// ioctlMain makes system call nr (args[0]) as ioctl(0, request, &'#')
// with request args[1], both in Go's integer syntax, and prints
// "ioctl <request>: ok" (exit 0) or "ioctl <request>: <error>" (exit 1).
// The request goes to the kernel as the full 64-bit register.
func ioctlMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "ioctl helper: want a system call number and a request")
		return 2
	}
	nr, err := strconv.ParseUint(args[0], 0, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ioctl helper:", err)
		return 2
	}
	req, err := strconv.ParseUint(args[1], 0, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ioctl helper:", err)
		return 2
	}
	c := byte('#')
	_, _, errno := unix.Syscall(uintptr(nr), 0, uintptr(req), uintptr(unsafe.Pointer(&c)))
	if errno != 0 {
		fmt.Printf("ioctl %#x: %v\n", req, errno)
		return 1
	}
	fmt.Printf("ioctl %#x: ok\n", req)
	return 0
}

// ioctlHelper puts this binary into dir, which the sandbox shows (its
// private /tmp hides the go test build directory), and returns its path.
func ioctlHelper(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	dst := filepath.Join(dir, "ioctl-helper")
	if os.Link(self, dst) == nil {
		return dst
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		_ = out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestSandboxRefusesTIOCSTI pushes "#" into the sandboxed shell's terminal
// in the ways the filter must refuse, in both restricted modes. Each
// attempt must fail with EPERM, and the command sent after it must run as
// sent: without the filter the first attempt succeeds (exit 0) and the
// next command becomes "#echo ...", which prints nothing.
func TestSandboxRefusesTIOCSTI(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("dev.tty.legacy_tiocsti is 0: the kernel itself refuses TIOCSTI here, so the filter's refusal cannot be told apart")
	}
	type attempt struct {
		what    string
		nr      uint64 // the system call
		request uint64 // ioctl's second argument, all 64 bits
	}
	attempts := []attempt{
		{"TIOCSTI", unix.SYS_IOCTL, unix.TIOCSTI},
		// The kernel reads the request as an unsigned int: with a high
		// bit set this is still TIOCSTI (CVE-2019-10063).
		{"TIOCSTI with the high word set", unix.SYS_IOCTL, 1<<32 | unix.TIOCSTI},
		// On a PTY the kernel would answer ENOTTY; the filter answers
		// first.
		{"TIOCLINUX", unix.SYS_IOCTL, unix.TIOCLINUX},
	}
	if runtime.GOARCH == "amd64" {
		// x32's ioctl (514 | __X32_SYSCALL_BIT); a kernel without x32
		// answers ENOSYS, one with x32 would inject.
		attempts = append(attempts, attempt{"x32 ioctl TIOCSTI", 0x40000000 | 514, unix.TIOCSTI})
	}
	for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		t.Run(string(mode), func(t *testing.T) {
			root := t.TempDir()
			helper := ioctlHelper(t, root)
			h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: mode, Root: root}, local.Options{})
			sp, _ := h.spawnSandboxed(h.owner)
			id := sp.ID()
			// bwrap read the filter and closed it: the shell does not
			// inherit the memfd.
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", sp.PID()))
			for _, fd := range fds {
				if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", sp.PID(), fd.Name())); strings.Contains(l, "ptyactor-seccomp") {
					t.Errorf("the shell holds the seccomp filter as fd %s (%s)", fd.Name(), l)
				}
			}
			if len(fds) == 0 {
				t.Errorf("the shell %d has no fds to check", sp.PID())
			}
			for i, a := range attempts {
				res := h.send(id, fmt.Sprintf("%s=%s %s %d %#x", helperVar, helperIoctl, helper, a.nr, a.request))
				refused := fmt.Sprintf("ioctl %#x: %v", a.request, unix.EPERM)
				if !settled(res, 1) || !hasLine(res.Viewport, refused) {
					t.Errorf("%s: %s exit %s, viewport %q; want exit 1 and the line %q",
						a.what, res.WaitReason, codeString(res.ExitCode), res.Viewport, refused)
				}
				next := fmt.Sprintf("next-%d-42", i)
				res = h.send(id, fmt.Sprintf("echo next-%d-$((6*7))", i))
				if !settled(res, 0) || !hasLine(res.Viewport, next) {
					t.Errorf("after %s: the next command printed no %q (%s exit %s, viewport %q): input was pushed into the terminal",
						a.what, next, res.WaitReason, codeString(res.ExitCode), res.Viewport)
				}
			}
		})
	}
}

// settled reports a send that ended on the prompt with exit code want.
func settled(res messages.SendResult, want int) bool {
	return res.WaitReason == messages.WaitStdinRead && res.ExitCode != nil && *res.ExitCode == want && !res.Status.Exited
}
