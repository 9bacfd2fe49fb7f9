//go:build linux

package linux

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestLookupHost cross-checks the arm64 table against x/sys/unix, which is
// generated from the kernel headers.
func TestLookupHost(t *testing.T) {
	for nr, want := range map[int64]WaitCall{
		unix.SYS_READ: CallRead, unix.SYS_READV: CallReadv, unix.SYS_PSELECT6: CallPselect6,
		unix.SYS_PPOLL: CallPpoll, unix.SYS_EPOLL_PWAIT: CallEpollPwait,
		unix.SYS_EPOLL_PWAIT2: CallEpollPwait2,
	} {
		if got, ok := ArchARM64.Lookup(nr); !ok || got != want {
			t.Errorf("Lookup(%d) = %v, %v; want %v", nr, got, ok, want)
		}
	}
	if len(arm64Calls) != 6 {
		t.Errorf("arm64 table has %d entries; want 6", len(arm64Calls))
	}
}
