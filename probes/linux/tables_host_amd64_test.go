//go:build linux

package linux

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestLookupHost cross-checks the x86_64 table against x/sys/unix, which is
// generated from the kernel headers.
func TestLookupHost(t *testing.T) {
	for nr, want := range map[int64]WaitCall{
		unix.SYS_READ: CallRead, unix.SYS_READV: CallReadv, unix.SYS_SELECT: CallSelect,
		unix.SYS_PSELECT6: CallPselect6, unix.SYS_POLL: CallPoll, unix.SYS_PPOLL: CallPpoll,
		unix.SYS_EPOLL_WAIT: CallEpollWait, unix.SYS_EPOLL_PWAIT: CallEpollPwait,
		unix.SYS_EPOLL_PWAIT2: CallEpollPwait2,
	} {
		if got, ok := ArchAMD64.Lookup(nr); !ok || got != want {
			t.Errorf("Lookup(%d) = %v, %v; want %v", nr, got, ok, want)
		}
	}
	if len(amd64Calls) != 9 {
		t.Errorf("amd64 table has %d entries; want 9", len(amd64Calls))
	}
}
