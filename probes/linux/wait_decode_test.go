package linux

// ProbeGroup's decoding of one waiting thread, by subject: each test a
// table of decodeCase run by testDecode (wait_test.go).

import (
	"io/fs"
	"syscall"
	"testing"
)

// The decode of read(2) and readv(2) of the terminal, on fd 0 or another.
func TestProbeGroupDecodeRead(t *testing.T) {
	testDecode(t, []decodeCase{
		{
			name:    "read fd 0 pts",
			setup:   func(f *fakeProc) { f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3) },
			waiting: true, call: CallRead,
		},
		{
			name:    "readv fd 0 pts",
			setup:   func(f *fakeProc) { f.task(200, 200, sc(x64Readv, 0, 0x7fa7c6532000, 1), 3) },
			waiting: true, call: CallReadv,
		},
		{
			name: "read fd 0 pipe",
			setup: func(f *fakeProc) {
				f.fd(200, 0, "pipe:[123]")
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			},
			call: CallRead,
		},
		{
			name: "less reads /dev/tty on fd 3",
			setup: func(f *fakeProc) {
				f.fd(200, 0, "/etc/hostname")
				f.fd(200, 3, "/dev/tty")
				f.task(200, 200, sc(x64Read, 3, 0x7fffbd808247, 1), 4)
			},
			waiting: true, call: CallRead,
		},
		{
			name: "read on an fd that does not resolve",
			setup: func(f *fakeProc) {
				f.errs["200/fd/0"] = &fs.PathError{Op: "readlink", Path: "200/fd/0", Err: syscall.EACCES}
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			},
			call: CallRead,
		},
		{
			name: "read with an fd argument beyond int32",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Read, 1<<32, 0x7fa7c6532000, 0x20000), 3)
			},
			call: CallRead,
		},
	})
}

// The decode of select(2) and pselect6(2): the read set, read from the task's memory.
func TestProbeGroupDecodeSelect(t *testing.T) {
	testDecode(t, []decodeCase{
		{
			name: "pselect6 nfds=1 bit 0",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Pselect6, 1, fdsetAddr), 19)
				f.poke(200, fdsetAddr, []byte{0x01})
			},
			waiting: true, call: CallPselect6,
		},
		{
			name: "select only fd 5, a socket",
			setup: func(f *fakeProc) {
				f.fd(200, 5, "socket:[456]")
				f.task(200, 200, sc(x64Select, 6, fdsetAddr), 19)
				f.poke(200, fdsetAddr, []byte{0x20})
			},
			call: CallSelect,
		},
		{
			name: "select fd 5 and fd 0",
			setup: func(f *fakeProc) {
				f.fd(200, 5, "socket:[456]")
				f.task(200, 200, sc(x64Select, 6, fdsetAddr), 19)
				f.poke(200, fdsetAddr, []byte{0x21})
			},
			waiting: true, call: CallSelect,
		},
		{
			name: "select bit set at or above nfds",
			setup: func(f *fakeProc) {
				f.fd(200, 3, "/dev/tty")
				f.task(200, 200, sc(x64Select, 3, fdsetAddr), 19)
				f.poke(200, fdsetAddr, []byte{0x08})
			},
			call: CallSelect,
		},
		{
			name: "select on fd 700 of 1024",
			setup: func(f *fakeProc) {
				f.fd(200, 700, "/dev/tty")
				set := make([]byte, 128)
				set[700/8] = 1 << (700 % 8)
				f.task(200, 200, sc(x64Select, 5000, fdsetAddr), 19)
				f.poke(200, fdsetAddr, set)
			},
			waiting: true, call: CallSelect,
		},
		{
			name: "pselect6 without a read set",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Pselect6, 1, 0, fdsetAddr), 19)
				f.poke(200, fdsetAddr, []byte{0x01})
			},
			call: CallPselect6,
		},
		{
			name: "pselect6 nfds=0",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Pselect6, 0, fdsetAddr), 19)
				f.poke(200, fdsetAddr, []byte{0x01})
			},
			call: CallPselect6,
		},
		{
			name: "unreadable mem",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Pselect6, 1, fdsetAddr), 19)
				f.memErr[200] = &fs.PathError{Op: "open", Path: "200/mem", Err: syscall.EACCES}
			},
			call: CallPselect6,
		},
		{
			name:  "unmapped read set",
			setup: func(f *fakeProc) { f.task(200, 200, sc(x64Pselect6, 1, fdsetAddr), 19) },
			call:  CallPselect6,
		},
	})
}

// The decode of poll(2) and ppoll(2): the pollfd array, read from the task's memory.
func TestProbeGroupDecodePoll(t *testing.T) {
	testDecode(t, []decodeCase{
		{
			name: "poll fd 0 POLLIN",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Poll, pollAddr, 1, 0xffffffff), 5)
				f.poke(200, pollAddr, pollfds([2]int{0, pollIn}))
			},
			waiting: true, call: CallPoll,
		},
		{
			name: "ppoll fd 0 POLLRDNORM",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Ppoll, pollAddr, 1), 5)
				f.poke(200, pollAddr, pollfds([2]int{0, pollRdNorm}))
			},
			waiting: true, call: CallPpoll,
		},
		{
			name: "poll fd 0 with events 0",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Poll, pollAddr, 1, 0xffffffff), 5)
				f.poke(200, pollAddr, pollfds([2]int{0, 0}))
			},
			call: CallPoll,
		},
		{
			name: "poll fd 0 POLLOUT only",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Poll, pollAddr, 1, 0xffffffff), 5)
				f.poke(200, pollAddr, pollfds([2]int{0, 0x4}))
			},
			call: CallPoll,
		},
		{
			name: "poll negative fd and a pipe",
			setup: func(f *fakeProc) {
				f.fd(200, 3, "pipe:[9]")
				f.task(200, 200, sc(x64Poll, pollAddr, 2, 0xffffffff), 5)
				f.poke(200, pollAddr, pollfds([2]int{-1, pollIn}, [2]int{3, pollIn}))
			},
			call: CallPoll,
		},
		{
			name: "poll nfds larger than the array is a miss",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Poll, pollAddr, 2, 0xffffffff), 5)
				f.poke(200, pollAddr, pollfds([2]int{0, pollIn}))
			},
			call: CallPoll,
		},
		{
			name: "gdb: poll over 4 fds, one the pts, and 2 futex threads",
			setup: func(f *fakeProc) {
				f.proc(200, 100, 200, 'S', "gdb")
				for _, fd := range []int{3, 4} {
					f.fd(200, fd, "pipe:[94803]")
				}
				f.fd(200, 5, "pipe:[94804]")
				f.fd(200, 9, "pipe:[94806]")
				f.task(200, 200, sc(x64Poll, pollAddr, 4, 0xffffffff), 210)
				f.task(200, 202, sc(x64Futex, 0x5593f75d7ac0, 0x189, 0, 0, 0, 0xffffffff), 1)
				f.task(200, 203, sc(x64Futex, 0x5593f75d7ac0, 0x189, 0, 0, 0, 0xffffffff), 1)
				f.poke(200, pollAddr, pollfds([2]int{3, 1}, [2]int{5, 1}, [2]int{9, 1}, [2]int{0, 1}))
			},
			waiting: true, call: CallPoll,
		},
	})
}

// The decode of epoll_wait(2) and its kin: the interest list from fdinfo, nested epolls.
func TestProbeGroupDecodeEpoll(t *testing.T) {
	testDecode(t, []decodeCase{
		{
			name: "epoll_wait tfd 0 events 19",
			setup: func(f *fakeProc) {
				f.fd(200, 4, eventpollLink)
				f.fdinfo(200, 4, epollFdinfo+"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(x64EpollWait, 4, 0x7ffe70bfcab0, 16, 0xffffffff), 8)
			},
			waiting: true, call: CallEpollWait,
		},
		{
			name: "epoll_wait tfd 7 a socket",
			setup: func(f *fakeProc) {
				f.fd(200, 4, eventpollLink)
				f.fd(200, 7, "socket:[8123]")
				f.fdinfo(200, 4, epollFdinfo+"tfd:        7 events:       19 data:                7  pos:0 ino:1fbb sdev:8\n")
				f.task(200, 200, sc(x64EpollWait, 4, 0x7ffe70bfcab0, 16, 0xffffffff), 8)
			},
			call: CallEpollWait,
		},
		{
			name: "epoll_wait tfd 0 EPOLLOUT only",
			setup: func(f *fakeProc) {
				f.fdinfo(200, 4, epollFdinfo+"tfd:        0 events:        4 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(x64EpollWait, 4, 0x7ffe70bfcab0, 16, 0xffffffff), 8)
			},
			call: CallEpollWait,
		},
		{
			name: "epoll_wait maxevents 0",
			setup: func(f *fakeProc) {
				f.fdinfo(200, 4, epollFdinfo+"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(x64EpollWait, 4, 0x7ffe70bfcab0, 0, 0xffffffff), 8)
			},
			call: CallEpollWait,
		},
		{
			name: "epoll_wait with unreadable fdinfo",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64EpollWait, 4, 0x7ffe70bfcab0, 16, 0xffffffff), 8)
			},
			call: CallEpollWait,
		},
		{
			name: "epoll_pwait2 tfd 0 edge-triggered",
			setup: func(f *fakeProc) {
				f.fdinfo(200, 4, epollFdinfo+"tfd:        0 events: 80000019 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(x64EpollPwait2, 4, 0x7ffe70bfcab0, 1, 0, 0, 8), 8)
			},
			waiting: true, call: CallEpollPwait2,
		},
		{
			name: "nested epoll",
			setup: func(f *fakeProc) {
				f.fd(200, 5, eventpollLink)
				f.fd(200, 6, eventpollLink)
				f.fdinfo(200, 5, epollFdinfo+"tfd:        6 events:       19 data:                6  pos:0 ino:14 sdev:10\n")
				f.fdinfo(200, 6, epollFdinfo+"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(x64EpollPwait, 5, 0x7ffe70bfcab0, 16, 0xffffffff, 0, 8), 8)
			},
			waiting: true, call: CallEpollPwait,
		},
		{
			name: "epoll instances in a cycle",
			setup: func(f *fakeProc) {
				f.fd(200, 5, eventpollLink)
				f.fd(200, 6, eventpollLink)
				f.fdinfo(200, 5, epollFdinfo+"tfd:        6 events:       19 data:                6  pos:0 ino:14 sdev:10\n")
				f.fdinfo(200, 6, epollFdinfo+"tfd:        5 events:       19 data:                5  pos:0 ino:14 sdev:10\n")
				f.task(200, 200, sc(x64EpollPwait, 5, 0x7ffe70bfcab0, 16, 0xffffffff, 0, 8), 8)
			},
			call: CallEpollPwait,
		},
	})
}

// The decode of the task's state: running, stopped, no syscall, an unknown one, other threads.
func TestProbeGroupDecodeState(t *testing.T) {
	testDecode(t, []decodeCase{
		{
			name:  "running",
			setup: func(f *fakeProc) { f.task(200, 200, "running", 3) },
		},
		{
			name:  "not in a syscall",
			setup: func(f *fakeProc) { f.task(200, 200, "-1 0x7ffc7ff5a610 0x7f8624efd954", 3) },
		},
		{
			name:  "malformed syscall line",
			setup: func(f *fakeProc) { f.task(200, 200, "0 0x0 0x7fa7c6532000", 3) },
		},
		{
			name:  "unknown syscall wait4",
			setup: func(f *fakeProc) { f.task(200, 200, sc(x64Wait4, 0xffffffff, 0x7ffc6c569480, 0xa), 3) },
		},
		{
			name:  "sleep in clock_nanosleep",
			setup: func(f *fakeProc) { f.task(200, 200, sc(x64ClockNanosleep, 0, 0, 0x7fff1699a480, 0x7fff1699a4c0), 3) },
		},
		{
			name: "stopped process",
			setup: func(f *fakeProc) {
				f.proc(200, 100, 200, 'T', "cat")
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			},
			call: CallRead,
		},
		{
			name: "stack below 4 GiB: maybe a compat task",
			setup: func(f *fakeProc) {
				f.task(200, 200, "0 0x0 0x804a000 0x1 0x0 0x0 0x0 0xffd0c1f0 0xf7f2e549", 3)
			},
			call: CallRead,
		},
		{
			name: "status unreadable",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
				delete(f.files, "200/task/200/status")
			},
			call: CallRead,
		},
		{
			name: "status without the counter",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
				f.files["200/task/200/status"] = "Name:\tcat\n"
			},
			call: CallRead,
		},
		{
			name: "non-main thread reads stdin",
			setup: func(f *fakeProc) {
				f.proc(200, 100, 200, 'S', "python3")
				f.task(200, 200, sc(x64Futex, 0x5593f75d7ac0, 0x189, 0, 0, 0, 0xffffffff), 2)
				f.task(200, 205, sc(x64Read, 0, 0x7fa7c6532000, 0x2000), 1)
			},
			waiting: true, call: CallRead, tid: 205,
		},
	})
}

// The decode of the syscall numbers of each architecture.
func TestProbeGroupDecodeArch(t *testing.T) {
	testDecode(t, []decodeCase{
		{
			name: "arm64 read",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(a64Read, 0, 0xffffd1e2f000, 0x20000), 3)
			},
			waiting: true, call: CallRead,
		},
		{
			name: "arm64 readv",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(a64Readv, 0, 0xffffd1e2f000, 1), 3)
			},
			waiting: true, call: CallReadv,
		},
		{
			name: "arm64 pselect6",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(a64Pselect6, 1, fdsetAddr), 3)
				f.poke(200, fdsetAddr, []byte{1})
			},
			waiting: true, call: CallPselect6,
		},
		{
			name: "arm64 ppoll",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(a64Ppoll, pollAddr, 1), 3)
				f.poke(200, pollAddr, pollfds([2]int{0, pollIn}))
			},
			waiting: true, call: CallPpoll,
		},
		{
			name: "arm64 epoll_pwait",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.fdinfo(200, 4, epollFdinfo+"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(a64EpollPwait, 4, 0xffffd1e2f000, 16, 0xffffffff, 0, 8), 3)
			},
			waiting: true, call: CallEpollPwait,
		},
		{
			name: "arm64 epoll_pwait2",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.fdinfo(200, 4, epollFdinfo+"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16\n")
				f.task(200, 200, sc(a64EpollPwait2, 4, 0xffffd1e2f000, 16, 0, 0, 8), 3)
			},
			waiting: true, call: CallEpollPwait2,
		},
		{
			name: "arm64 number 0 is io_setup, not read",
			arch: ArchARM64,
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			},
		},
		{
			name: "x86_64 number 63 is uname, not read",
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(a64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			},
		},
		{
			name: "unsupported arch",
			arch: -1,
			setup: func(f *fakeProc) {
				f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			},
		},
	})
}
