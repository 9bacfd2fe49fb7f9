package linux

import (
	"encoding/binary"
	"errors"
	"testing"
)

var testTerm = Terminal{Paths: []string{"/dev/pts/3", "/dev/tty"}}

// Syscall numbers used by the fixtures, from the UAPI tables.
const (
	x64Read, x64Readv, x64Poll, x64Select          = 0, 19, 7, 23
	x64EpollWait, x64Pselect6, x64Ppoll            = 232, 270, 271
	x64EpollPwait, x64EpollPwait2, x64Wait4        = 281, 441, 61
	x64Futex, x64ClockNanosleep                    = 202, 230
	a64EpollPwait, a64Read, a64Readv               = 22, 63, 65
	a64Pselect6, a64Ppoll, a64EpollPwait2          = 72, 73, 441
	fdsetAddr, pollAddr                     uint64 = 0x7ffc7ff5a6a0, 0x5593f777dbf0
)

// shellWithJob is bash 100 (group 100, in wait4) with one child, 200, that
// leads the terminal's foreground group 200 and has the pts on fds 0-2.
func shellWithJob(comm string) *fakeProc {
	f := newFake()
	f.proc(100, 1, 100, 'S', "bash")
	f.task(100, 100, sc(x64Wait4, 0xffffffff, 0x7ffc6c569480, 0xa), 9, 200)
	f.fd(100, 0, "/dev/pts/3")
	f.proc(200, 100, 200, 'S', comm)
	for fd := range 3 {
		f.fd(200, fd, "/dev/pts/3")
	}
	return f
}

// pollfds encodes struct pollfd entries as {fd, events} pairs.
func pollfds(pairs ...[2]int) []byte {
	b := make([]byte, 8*len(pairs))
	for i, p := range pairs {
		binary.LittleEndian.PutUint32(b[i*8:], uint32(int32(p[0])))
		binary.LittleEndian.PutUint16(b[i*8+4:], uint16(p[1]))
		binary.LittleEndian.PutUint16(b[i*8+6:], 0)
	}
	return b
}

const epollFdinfo = "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t20\n"

// decodeCase is one thread's wait in the foreground group of
// shellWithJob("cat"), as ProbeGroup should decode it.
type decodeCase struct {
	name    string
	arch    Arch
	setup   func(f *fakeProc)
	waiting bool
	call    WaitCall // of thread 200/200 (or tid), waiting or not
	tid     int      // the thread whose call is checked; 0 means 200
}

// testDecode runs each case: the group is found, the thread named, its
// call decoded, and it waits for the terminal or not.
func testDecode(t *testing.T, tests []decodeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := shellWithJob("cat")
			tt.setup(f)
			arch := tt.arch
			switch arch {
			case 0:
				arch = ArchAMD64
			case -1:
				arch = ArchUnsupported
			}
			g, err := ProbeGroup(f, f, arch, 100, 200, testTerm)
			if err != nil {
				t.Fatal(err)
			}
			if g.Pgid != 200 || g.Members != 1 {
				t.Errorf("Pgid, Members = %d, %d; want 200, 1", g.Pgid, g.Members)
			}
			tid := tt.tid
			if tid == 0 {
				tid = 200
			}
			var th *ThreadWait
			for i := range g.Threads {
				if g.Threads[i].TID == tid {
					th = &g.Threads[i]
				}
			}
			if th == nil {
				t.Fatalf("thread %d missing from %+v", tid, g.Threads)
			}
			if th.Call != tt.call {
				t.Errorf("Call = %v; want %v", th.Call, tt.call)
			}
			w, ok := g.Waiting()
			if ok != tt.waiting {
				t.Fatalf("Waiting() = %+v, %v; want waiting=%v (threads %+v)", w, ok, tt.waiting, g.Threads)
			}
			if !ok {
				if w != (ThreadWait{}) {
					t.Errorf("Waiting() returned %+v with false", w)
				}
				for _, th := range g.Threads {
					if th.Switches != 0 {
						t.Errorf("Switches = %d on a thread that does not wait", th.Switches)
					}
				}
				return
			}
			if w.PID != 200 || w.TID != tid || w.Comm != g.Threads[0].Comm || w.Call != tt.call || w.Switches == 0 {
				t.Errorf("Waiting() = %+v", w)
			}
		})
	}
}

func TestProbeGroupTree(t *testing.T) {
	t.Run("shell is the foreground group", func(t *testing.T) {
		f := newFake()
		f.proc(100, 1, 100, 'S', "bash")
		f.task(100, 100, "270 0x1 0x7ffc6c568630 0x0 0x0 0x0 0x7ffc6c568560 0x7ffc6c568520 0x7f40bc1f3aec", 1)
		f.fd(100, 0, "/dev/pts/3")
		f.poke(100, 0x7ffc6c568630, []byte{1})
		g, err := ProbeGroup(f, f, ArchAMD64, 100, 100, testTerm)
		w, ok := g.Waiting()
		if err != nil || !ok || w.Comm != "bash" || w.Call != CallPselect6 || w.Switches != 1 || g.Members != 1 {
			t.Fatalf("ProbeGroup = %+v, %v; waiting %+v %v", g, err, w, ok)
		}
	})
	t.Run("grandchild forked by a non-main thread", func(t *testing.T) {
		f := shellWithJob("sh")
		f.task(200, 200, sc(x64Wait4, 0xffffffff), 2)
		f.task(200, 201, sc(x64Futex, 0x5593f75d7ac0), 2, 300)
		f.proc(300, 200, 200, 'S', "cat")
		f.fd(300, 0, "/dev/pts/3")
		f.task(300, 300, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 4)
		g, err := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
		w, ok := g.Waiting()
		if err != nil || !ok || w.PID != 300 || w.Comm != "cat" || g.Members != 2 || len(g.Threads) != 3 {
			t.Fatalf("ProbeGroup = %+v, %v", g, err)
		}
	})
	t.Run("sleep | cat: a pipeline that reads a pipe", func(t *testing.T) {
		f := newFake()
		f.proc(100, 1, 100, 'S', "bash")
		f.task(100, 100, sc(x64Wait4, 0xffffffff), 9, 200, 201)
		f.proc(200, 100, 200, 'S', "sleep")
		f.task(200, 200, sc(x64ClockNanosleep, 0, 0, 0x7fff1699a480), 1)
		f.fd(200, 0, "/dev/pts/3")
		f.proc(201, 100, 200, 'S', "cat")
		f.task(201, 201, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 1)
		f.fd(201, 0, "pipe:[777]")
		g, err := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
		if _, ok := g.Waiting(); err != nil || ok || g.Members != 2 || len(g.Threads) != 2 {
			t.Fatalf("ProbeGroup = %+v, %v", g, err)
		}
		if g.Threads[1].Call != CallRead || g.Threads[0].Call != CallNone {
			t.Errorf("calls = %v, %v", g.Threads[0].Call, g.Threads[1].Call)
		}
	})
	t.Run("member vanishes after its stat", func(t *testing.T) {
		f := shellWithJob("cat")
		f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
		f.onRead = func(p string) {
			if p == "200/stat" {
				for k := range f.files {
					if len(k) > 4 && k[:4] == "200/" {
						delete(f.files, k)
					}
				}
				for k := range f.links {
					if len(k) > 4 && k[:4] == "200/" {
						delete(f.links, k)
					}
				}
			}
		}
		g, err := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
		if _, ok := g.Waiting(); err != nil || ok {
			t.Fatalf("ProbeGroup = %+v, %v", g, err)
		}
	})
	t.Run("unsupported arch lists threads", func(t *testing.T) {
		f := shellWithJob("cat")
		f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
		g, err := ProbeGroup(f, f, ArchUnsupported, 100, 200, testTerm)
		if _, ok := g.Waiting(); err != nil || ok || g.Members != 1 || len(g.Threads) != 1 {
			t.Fatalf("ProbeGroup = %+v, %v", g, err)
		}
		if f.reads["200/task/200/syscall"] != 0 {
			t.Error("syscall read on an unsupported arch")
		}
	})
	t.Run("nil MemReader", func(t *testing.T) {
		f := shellWithJob("python3")
		f.task(200, 200, sc(x64Pselect6, 1, fdsetAddr), 19)
		f.poke(200, fdsetAddr, []byte{0x01})
		g, err := ProbeGroup(f, nil, ArchAMD64, 100, 200, testTerm)
		if _, ok := g.Waiting(); err != nil || ok {
			t.Fatalf("ProbeGroup = %+v, %v", g, err)
		}
	})
}

// Which processes count as the foreground group's members: a zombie, a
// pid reused under another parent, a descendant in another group do not;
// a member that vanished and a cycle in the children lists leave the
// others counted.
func TestProbeGroupMembers(t *testing.T) {
	for _, tt := range []struct {
		name             string
		setup            func(f *fakeProc)
		members, threads int
		waiting          bool
	}{
		{name: "zombie member is skipped", setup: func(f *fakeProc) {
			f.proc(200, 100, 200, 'Z', "cat")
			f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
		}},
		{name: "member vanishes between the children walk and its stat", setup: func(f *fakeProc) {
			f.task(100, 100, sc(x64Wait4, 0xffffffff), 9, 200, 201)
			f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
			// 201 is listed but has no /proc entry any more.
		}, members: 1, threads: 1, waiting: true},
		{name: "reused pid with another parent", setup: func(f *fakeProc) {
			f.proc(200, 77, 200, 'S', "cat")
			f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
		}},
		{name: "descendant in another group", setup: func(f *fakeProc) {
			f.proc(200, 100, 150, 'S', "cat")
			f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3)
		}},
		{name: "children cycle", setup: func(f *fakeProc) {
			f.task(200, 200, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 3, 100, 200)
		}, members: 1, threads: 1, waiting: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := shellWithJob("cat")
			tt.setup(f)
			g, err := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
			if _, ok := g.Waiting(); err != nil || ok != tt.waiting || g.Members != tt.members || len(g.Threads) != tt.threads {
				t.Fatalf("ProbeGroup = %+v, %v; want %d members, %d threads, waiting %v", g, err, tt.members, tt.threads, tt.waiting)
			}
		})
	}
}

// TestProbeGroupConsistency changes a thread while it is being inspected:
// only a thread seen in the same syscall with the same context-switch count
// before and after the inspection is waiting.
func TestProbeGroupConsistency(t *testing.T) {
	const line = "270 0x1 0x7ffc7ff5a6a0 0x0 0x0 0x0 0x0 0x7ffc7ff5a610 0x7f8624efd954"
	setup := func() *fakeProc {
		f := shellWithJob("python3")
		f.task(200, 200, line, 19)
		f.poke(200, fdsetAddr, []byte{0x01})
		return f
	}
	t.Run("steady", func(t *testing.T) {
		f := setup()
		g, _ := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
		if w, ok := g.Waiting(); !ok || w.Switches != 19 || w.Args != [6]uint64{1, fdsetAddr} {
			t.Fatalf("Waiting() = %+v, %v", w, ok)
		}
		if n := f.reads["200/task/200/syscall"]; n != 2 {
			t.Errorf("syscall read %d times; want 2", n)
		}
	})
	t.Run("left the syscall", func(t *testing.T) {
		f := setup()
		f.onRead = func(p string) {
			if p == "200/task/200/syscall" {
				f.files[p] = "running\n"
			}
		}
		g, _ := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
		if w, ok := g.Waiting(); ok {
			t.Fatalf("Waiting() = %+v", w)
		}
	})
	t.Run("slept again with the same arguments", func(t *testing.T) {
		f := setup()
		f.onRead = func(p string) {
			if p == "200/task/200/status" && f.reads[p] == 1 {
				f.task(200, 200, line, 20)
			}
		}
		g, _ := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
		if w, ok := g.Waiting(); ok {
			t.Fatalf("Waiting() = %+v", w)
		}
	})
}

func TestProbeGroupCachesLinks(t *testing.T) {
	f := shellWithJob("gdb")
	f.task(200, 200, sc(x64Poll, pollAddr, 3, 0xffffffff), 5)
	f.task(200, 201, sc(x64Read, 0, 0x7fa7c6532000, 0x20000), 5)
	f.fd(200, 0, "pipe:[1]")
	f.poke(200, pollAddr, pollfds([2]int{0, pollIn}, [2]int{0, pollIn}, [2]int{0, pollPri}))
	g, err := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm)
	if _, ok := g.Waiting(); err != nil || ok {
		t.Fatalf("ProbeGroup = %+v, %v", g, err)
	}
	if n := f.reads["200/fd/0"]; n != 1 {
		t.Errorf("200/fd/0 resolved %d times; want 1", n)
	}
}

func TestProbeGroupErrors(t *testing.T) {
	f := shellWithJob("cat")
	if _, err := ProbeGroup(f, f, ArchAMD64, 0, 200, testTerm); err == nil {
		t.Error("shell pid 0 accepted")
	}
	if _, err := ProbeGroup(f, f, ArchAMD64, 100, -1, testTerm); err == nil {
		t.Error("pgid -1 accepted")
	}
	if _, err := ProbeGroup(f, f, ArchAMD64, 4242, 200, testTerm); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing shell: %v; want ErrNotFound", err)
	}
	f.files["100/stat"] = "garbage"
	if _, err := ProbeGroup(f, f, ArchAMD64, 100, 200, testTerm); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed shell stat: %v; want ErrMalformed", err)
	}
}

// TestProbeGroupFixtureTrees probes directory trees recorded from real
// programs in a PTY (/dev/pts/1) on x86_64, served by FS.
func TestProbeGroupFixtureTrees(t *testing.T) {
	term := Terminal{Paths: []string{"/dev/pts/1", "/dev/tty"}}
	tests := []struct {
		name        string
		shell, pgid int
		members     int
		threads     int
		waiting     bool
		comm        string
		call        WaitCall
		pid, tid    int
		switches    uint64
	}{
		{name: "python3", shell: 100, pgid: 200, members: 1, threads: 1, waiting: true,
			comm: "python3", call: CallPselect6, pid: 200, tid: 200, switches: 19},
		{name: "node", shell: 100, pgid: 300, members: 1, threads: 11, waiting: true,
			comm: "node", call: CallEpollPwait, pid: 300, tid: 300, switches: 31},
		{name: "gdb", shell: 100, pgid: 400, members: 1, threads: 3, waiting: true,
			comm: "gdb", call: CallPoll, pid: 400, tid: 400, switches: 210},
		{name: "less", shell: 100, pgid: 500, members: 1, threads: 1, waiting: true,
			comm: "less", call: CallRead, pid: 500, tid: 500, switches: 4},
		{name: "sleep-cat", shell: 100, pgid: 600, members: 2, threads: 2},
		{name: "zombie-vanished", shell: 100, pgid: 700, members: 1, threads: 1, waiting: true,
			comm: "cat", call: CallRead, pid: 702, tid: 702, switches: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := hexMem(t, "testdata/wait/"+tt.name+"/mem.txt")
			g, err := ProbeGroup(fixtureFS(tt.name), mem, ArchAMD64, tt.shell, tt.pgid, term)
			if err != nil {
				t.Fatal(err)
			}
			if g.Members != tt.members || len(g.Threads) != tt.threads {
				t.Errorf("Members, threads = %d, %d; want %d, %d", g.Members, len(g.Threads), tt.members, tt.threads)
			}
			w, ok := g.Waiting()
			if ok != tt.waiting {
				t.Fatalf("Waiting() = %+v, %v; threads %+v", w, ok, g.Threads)
			}
			if !ok {
				return
			}
			if w.Comm != tt.comm || w.Call != tt.call || w.PID != tt.pid || w.TID != tt.tid || w.Switches != tt.switches {
				t.Errorf("Waiting() = %+v", w)
			}
			if n := countWaiting(g); n != 1 {
				t.Errorf("%d threads waiting; want 1", n)
			}
		})
	}
}

func countWaiting(g GroupWait) int {
	n := 0
	for _, t := range g.Threads {
		if t.Waiting {
			n++
		}
	}
	return n
}
