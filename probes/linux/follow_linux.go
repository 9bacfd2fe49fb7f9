package linux

import (
	"bytes"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Follower keeps the /proc files of one thread that ProbeGroup saw waiting
// open between probes, so that the next look at the same wait costs a few
// preads instead of a walk of the shell's tree (a REPL returns to the same
// read or select after every line; the walk opens about ten files and costs
// tens of microseconds, a held pread about one).
//
// Held /proc files are bound to the task they were opened for: once it exits
// they fail with ESRCH, so a recycled pid can never answer for it. The
// decision is ProbeGroup's, made by the same code (prober.thread); only the
// membership walk is skipped, because the question a send asks is whether
// some thread of the foreground group waits on the terminal, and the
// followed thread answers it by itself: its stat must still name the
// foreground group.
//
// A Follower is safe for concurrent use; probes are expected to come one at
// a time.
type Follower struct {
	arch Arch
	term Terminal

	mu       sync.Mutex
	pid, tid int
	comm     string
	files    map[string]int // path relative to /proc → held descriptor
	sched    bool           // context switches from schedstat, not status
	buf      [4096]byte
}

// NewFollower returns an empty follower for threads of the given
// architecture waiting on term.
func NewFollower(arch Arch, term Terminal) *Follower {
	return &Follower{arch: arch, term: term}
}

// Track starts following the thread of tw, which ProbeGroup reported
// Waiting, and stops following the previous one. A thread waiting in an
// epoll call is not followed: whether an event loop waits is decided over
// every thread of the group.
func (f *Follower) Track(tw ThreadWait) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files != nil && f.pid == tw.PID && f.tid == tw.TID {
		return
	}
	f.reset()
	if !tw.Waiting || f.arch == ArchUnsupported {
		return
	}
	switch tw.Call {
	case CallEpollWait, CallEpollPwait, CallEpollPwait2:
		return
	}
	task := taskPath(tw.PID, tw.TID)
	paths := []string{strconv.Itoa(tw.PID) + "/stat", task + "/syscall", task + "/schedstat"}
	if tw.Call != CallRead && tw.Call != CallReadv {
		paths = append(paths, strconv.Itoa(tw.PID)+"/mem")
	}
	files := make(map[string]int, len(paths)+1)
	for _, p := range paths {
		fd, err := openRead("/proc/" + p)
		if err != nil && strings.HasSuffix(p, "/schedstat") {
			// Without CONFIG_SCHED_INFO the counter comes from status.
			p = task + "/status"
			fd, err = openRead("/proc/" + p)
		}
		if err != nil {
			closeAll(files)
			return
		}
		files[p] = fd
	}
	f.pid, f.tid, f.comm, f.files = tw.PID, tw.TID, tw.Comm, files
	_, f.sched = files[task+"/schedstat"]
	if f.sched {
		// A kernel that keeps no sched_info prints zeros: no proof there.
		if n, err := f.schedCount(task); err != nil || n == 0 {
			f.reset()
		}
	}
}

// Recheck reports whether the followed thread, still alive, not stopped and
// in process group pgid, is blocked reading the terminal now. False means
// "not proven by this thread" (it left the wait, exited, or anything could
// not be read): the caller falls back to ProbeGroup.
func (f *Follower) Recheck(pgid int) (ThreadWait, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		return ThreadWait{}, false
	}
	b, err := f.read(strconv.Itoa(f.pid) + "/stat")
	if err != nil {
		f.reset()
		return ThreadWait{}, false
	}
	s, err := ParseStat(b)
	if err != nil || s.PID != f.pid || s.PGRP != pgid || !s.Alive() {
		return ThreadWait{}, false
	}
	p := prober{r: heldFiles{f}, m: heldFiles{f}, arch: f.arch, term: f.term, links: make(map[fdKey]string, 1), sched: f.sched}
	tw := p.thread(s, f.tid)
	return tw, tw.Waiting
}

// Close stops following; the follower may be used again.
func (f *Follower) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reset()
}

func (f *Follower) reset() {
	closeAll(f.files)
	f.files, f.pid, f.tid, f.comm, f.sched = nil, 0, 0, "", false
}

func closeAll(files map[string]int) {
	for _, fd := range files {
		_ = syscall.Close(fd)
	}
}

// read preads a held file into f.buf; the result is valid until the next
// read.
func (f *Follower) read(p string) ([]byte, error) {
	fd, ok := f.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
	}
	for {
		n, err := syscall.Pread(fd, f.buf[:], 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "pread", Path: p, Err: err}
		}
		if n == len(f.buf) {
			return nil, errTooBig
		}
		return f.buf[:n], nil
	}
}

func (f *Follower) schedCount(task string) (uint64, error) {
	b, err := f.read(task + "/schedstat")
	if err != nil {
		return 0, err
	}
	return parseSchedstat(b)
}

// heldFiles serves the followed thread's files from their held descriptors
// to prober.thread; fd links are resolved afresh, since the thread may have
// replaced a descriptor since the last look.
type heldFiles struct{ f *Follower }

func (h heldFiles) ReadFile(p string) ([]byte, error) {
	b, err := h.f.read(p)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

func (h heldFiles) readShared(p string) ([]byte, error) { return h.f.read(p) }

func (h heldFiles) ReadLink(p string) (string, error) { return FS{}.ReadLink(p) }

func (h heldFiles) ReadDirNames(p string) ([]string, error) {
	return nil, &fs.PathError{Op: "readdirent", Path: p, Err: fs.ErrNotExist}
}

func (h heldFiles) ReadMem(pid int, addr uint64, n int) ([]byte, error) {
	p := strconv.Itoa(pid) + "/mem"
	fd, ok := h.f.files[p]
	if !ok || n < 0 || n > len(h.f.buf) || addr > 1<<63-1 {
		return nil, errBadRange
	}
	b := make([]byte, n)
	for done := 0; done < n; {
		m, err := syscall.Pread(fd, b[done:], int64(addr)+int64(done))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "pread", Path: p, Err: err}
		}
		if m == 0 {
			return nil, errShortRead
		}
		done += m
	}
	return b, nil
}
