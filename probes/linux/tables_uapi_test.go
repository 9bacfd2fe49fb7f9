package linux

import "testing"

func TestArchFor(t *testing.T) {
	for goarch, want := range map[string]Arch{
		"amd64": ArchAMD64, "arm64": ArchARM64, "386": ArchUnsupported,
		"arm": ArchUnsupported, "riscv64": ArchUnsupported, "": ArchUnsupported,
	} {
		if got := ArchFor(goarch); got != want {
			t.Errorf("ArchFor(%q) = %v; want %v", goarch, got, want)
		}
	}
	if ArchAMD64.String() != "amd64" || ArchARM64.String() != "arm64" || ArchUnsupported.String() != "unsupported" {
		t.Error("Arch.String")
	}
}

// TestLookup checks every number of both tables against the kernel UAPI
// (syscall_64.tbl and asm-generic/unistd.h), and numbers that belong to
// other syscalls.
func TestLookup(t *testing.T) {
	tests := []struct {
		arch Arch
		nr   int64
		want WaitCall // CallNone: not a wait call
	}{
		{ArchAMD64, 0, CallRead},
		{ArchAMD64, 7, CallPoll},
		{ArchAMD64, 19, CallReadv},
		{ArchAMD64, 23, CallSelect},
		{ArchAMD64, 232, CallEpollWait},
		{ArchAMD64, 270, CallPselect6},
		{ArchAMD64, 271, CallPpoll},
		{ArchAMD64, 281, CallEpollPwait},
		{ArchAMD64, 441, CallEpollPwait2},
		{ArchAMD64, 17, CallNone},  // pread64
		{ArchAMD64, 61, CallNone},  // wait4
		{ArchAMD64, 63, CallNone},  // uname
		{ArchAMD64, 202, CallNone}, // futex
		{ArchAMD64, 230, CallNone}, // clock_nanosleep
		{ArchAMD64, 515, CallNone}, // x32 readv
		{ArchAMD64, 0x40000000, CallNone},
		{ArchAMD64, -1, CallNone},
		{ArchARM64, 22, CallEpollPwait},
		{ArchARM64, 63, CallRead},
		{ArchARM64, 65, CallReadv},
		{ArchARM64, 72, CallPselect6},
		{ArchARM64, 73, CallPpoll},
		{ArchARM64, 441, CallEpollPwait2},
		{ArchARM64, 0, CallNone},   // io_setup
		{ArchARM64, 7, CallNone},   // fsetxattr
		{ArchARM64, 23, CallNone},  // dup
		{ArchARM64, 61, CallNone},  // getdents64
		{ArchARM64, 67, CallNone},  // pread64
		{ArchARM64, 98, CallNone},  // futex
		{ArchARM64, 232, CallNone}, // mincore
		{ArchARM64, 260, CallNone}, // wait4
		{ArchARM64, 270, CallNone}, // process_vm_readv
		{ArchARM64, 281, CallNone}, // execveat
		{ArchUnsupported, 0, CallNone},
		{ArchUnsupported, 63, CallNone},
		{ArchUnsupported, 441, CallNone},
	}
	for _, tt := range tests {
		got, ok := tt.arch.Lookup(tt.nr)
		if got != tt.want || ok != (tt.want != CallNone) {
			t.Errorf("%v.Lookup(%d) = %v, %v; want %v", tt.arch, tt.nr, got, ok, tt.want)
		}
	}
}

func TestWaitCallString(t *testing.T) {
	want := []string{"none", "read", "readv", "select", "pselect6", "poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_pwait2"}
	for i, w := range want {
		if got := WaitCall(i).String(); got != w {
			t.Errorf("WaitCall(%d) = %q; want %q", i, got, w)
		}
	}
	if got := WaitCall(99).String(); got != "WaitCall(99)" {
		t.Errorf("WaitCall(99) = %q", got)
	}
}
