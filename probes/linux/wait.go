package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Terminal identifies the session's terminal: the descriptor targets that
// count as "the terminal" when a thread waits on them.
type Terminal struct {
	// Paths are compared with the link /proc/<pid>/fd/<n>, e.g.
	// {"/dev/pts/3", "/dev/tty"}. "/dev/tty" is the controlling terminal of
	// the process that opened it, which for a member of the terminal's
	// foreground group is the session's own terminal.
	Paths []string
	// Device, when set, identifies the pts by its device node, and a
	// reader that can stat descriptors (FS) matches by identity instead of
	// by path: a pts of another devpts instance with the same number (a
	// sandbox's own) is not this terminal, and this pts bound under another
	// name (bwrap's /dev/console) is. The tty device (/dev/tty, 5:0)
	// always matches, as above.
	Device *DeviceID
}

// DeviceID is a device node's identity: the filesystem it lives on
// (st_dev, the devpts instance) and the device it names (st_rdev).
type DeviceID struct{ Dev, Rdev uint64 }

func (t Terminal) matches(link string) bool {
	return link != "" && slices.Contains(t.Paths, link)
}

// fdStater is a ProcReader that can stat what a descriptor refers to.
type fdStater interface {
	// StatFD returns the identity of the file behind /proc/<pid>/fd/<fd>,
	// and whether it is a character device.
	StatFD(pid, fd int) (id DeviceID, char bool, err error)
}

// ThreadWait is what one probe saw of one thread.
type ThreadWait struct {
	PID, TID int
	// Comm is the process's command name from stat (the reader's name).
	Comm string
	// Call is the wait call the thread is blocked in, set whenever its
	// syscall is in the table, waiting on the terminal or not. It is only
	// meaningful as "the reader's call" when Waiting.
	Call WaitCall
	// Waiting reports that the thread is blocked reading the terminal.
	Waiting bool
	// Switches is voluntary_ctxt_switches of the thread, read before and
	// after the inspection and equal both times, so it names the very sleep
	// that was observed. It is set only when Waiting (0 otherwise). A thread
	// that leaves its wait and enters one again has a larger count; so may a
	// thread woken inside one syscall without leaving it (select and poll on
	// a tty also sleep on its write-space queue, woken when a throttled
	// master is read).
	Switches uint64
	// Args are the raw syscall arguments, set whenever the thread is blocked
	// in a syscall.
	Args [6]uint64
	// Timeout is the wait's own timeout when it has one (HasTimeout): the
	// thread resumes by itself after it, as vim does after an Escape to
	// see whether a key code follows. Set only when Waiting.
	Timeout    time.Duration
	HasTimeout bool
}

// GroupWait is the result of probing one foreground process group.
type GroupWait struct {
	Pgid int
	// Threads lists every thread of every member, ordered by PID then TID.
	Threads []ThreadWait
	// Members counts the live processes of the group that were found.
	Members int
}

// Waiting reports whether any thread waits on the terminal, and the first
// such thread.
func (g GroupWait) Waiting() (ThreadWait, bool) {
	for _, t := range g.Threads {
		if t.Waiting {
			return t, true
		}
	}
	return ThreadWait{}, false
}

// Limits that keep one probe bounded.
const (
	// maxWalk caps the processes examined under the shell.
	maxWalk = 4096
	// maxFDs caps the descriptors examined by select and poll (FD_SETSIZE).
	maxFDs = 1024
	// maxEpollDepth caps epoll instances nested in epoll instances.
	maxEpollDepth = 4
)

// Event bits from include/uapi/asm-generic/poll.h.
const (
	pollIn     = 0x1
	pollPri    = 0x2
	pollRdNorm = 0x40
)

const eventpollLink = "anon_inode:[eventpoll]"

// ProbeGroup examines the terminal's foreground process group pgid and
// reports, for every thread of every member, whether it is blocked reading
// the terminal.
//
// Members are found among the shell and its descendants, walked through
// <pid>/task/<tid>/children (CONFIG_PROC_CHILDREN; without it only the shell
// itself is seen), never by listing all of /proc. A process counts when its
// stat pgrp is pgid and it is alive: zombies are skipped, and so is a process
// that vanishes during the walk or whose parent no longer matches (pid
// reuse). A thread is Waiting when it is blocked in
//
//   - read or readv on a descriptor that resolves to the terminal;
//   - select or pselect6 whose read set, read through m, holds such a
//     descriptor below nfds;
//   - poll or ppoll with a pollfd for such a descriptor requesting POLLIN,
//     POLLPRI or POLLRDNORM;
//   - epoll_wait, epoll_pwait or epoll_pwait2 on an epoll instance whose
//     interest list (<pid>/fdinfo/<epfd>) holds such a descriptor with EPOLLIN.
//
// The probe fails closed: anything unreadable, malformed, unknown or
// unsupported is not waiting; a stopped process (T, t), a task whose stack
// pointer is below 4 GiB (possibly a 32-bit compat task, whose numbers
// come from another table) and a thread whose syscall or context-switch count
// changed while it was being inspected are not waiting either. On
// ArchUnsupported members and threads are listed and nothing waits.
//
// The error is non-nil only when the probe cannot start: bad arguments, or
// the shell itself unreadable (an error wrapping ErrNotFound once it is gone).
//
// With r an FS, files are read with raw syscalls into a pooled buffer; one
// probe of a one-thread REPL opens about ten /proc files.
func ProbeGroup(r ProcReader, m MemReader, arch Arch, shellPID, pgid int, term Terminal) (GroupWait, error) {
	g := GroupWait{Pgid: pgid}
	if shellPID <= 0 || pgid <= 0 {
		return g, fmt.Errorf("linux: probe group: bad shell pid %d or pgid %d", shellPID, pgid)
	}
	if f, ok := r.(FS); ok {
		fast, release, err := newFastFS(f)
		if err != nil {
			return g, fmt.Errorf("linux: probe group %d: %w", pgid, err)
		}
		defer release()
		r = fast
	}
	shell, err := ReadStat(r, shellPID)
	if err != nil {
		return g, fmt.Errorf("linux: probe group %d: shell: %w", pgid, err)
	}
	p := prober{r: r, m: m, arch: arch, term: term, links: make(map[fdKey]string)}

	type candidate struct{ pid, parent int }
	seen := map[int]bool{shellPID: true}
	queue := []candidate{{pid: shellPID}}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		s := shell
		if c.pid != shellPID {
			// A child listed a moment ago may have exited, been reaped
			// and had its pid reused: the parent check catches reuse.
			if s, err = ReadStat(r, c.pid); err != nil || s.PPID != c.parent {
				continue
			}
		}
		tids := p.tids(c.pid)
		for _, tid := range tids {
			for _, child := range p.children(c.pid, tid) {
				if !seen[child] && len(seen) < maxWalk {
					seen[child] = true
					queue = append(queue, candidate{pid: child, parent: c.pid})
				}
			}
		}
		if s.PGRP != pgid || !s.Alive() {
			continue
		}
		g.Members++
		for _, tid := range tids {
			g.Threads = append(g.Threads, p.thread(s, tid))
		}
	}
	slices.SortFunc(g.Threads, func(a, b ThreadWait) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return a.TID - b.TID
	})
	return g, nil
}

type fdKey struct{ pid, fd int }

// prober holds what one ProbeGroup call reads more than once.
type prober struct {
	r     ProcReader
	m     MemReader
	arch  Arch
	term  Terminal
	links map[fdKey]string // fd link targets; "" when unreadable
	// sched takes the context-switch count from schedstat (a Follower's
	// held file) instead of status.
	sched bool
}

// tids lists the threads of pid in ascending order; nil when unreadable.
func (p *prober) tids(pid int) []int {
	names, err := p.r.ReadDirNames(strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil && tid > 0 {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids
}

// children lists the children forked by one thread.
func (p *prober) children(pid, tid int) []int {
	b, err := p.r.ReadFile(taskPath(pid, tid) + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if c, err := strconv.Atoi(string(f)); err == nil && c > 0 {
			out = append(out, c)
		}
	}
	return out
}

func taskPath(pid, tid int) string {
	return strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid)
}

// thread decides one thread. The syscall line is read, the wait inspected,
// and the line read again, all between two reads of the thread's voluntary
// context-switch count: a thread that stays asleep keeps its count, and one
// that went to sleep again in between has a larger one. Only an unchanged
// count and an unchanged line prove that the inspected memory and fd table
// belong to the wait that was observed.
func (p *prober) thread(s Stat, tid int) ThreadWait {
	tw := ThreadWait{PID: s.PID, TID: tid, Comm: s.Comm}
	if p.arch == ArchUnsupported {
		return tw
	}
	task := taskPath(s.PID, tid)
	// With schedstat's count (every time the thread is scheduled in), an
	// unchanged count from before the syscall line was read to after the
	// inspection proves the thread never ran in between: the line, the
	// memory and the fd table all belong to one wait, and the line need
	// not be read again. voluntary_ctxt_switches only moves when the thread
	// sleeps again, so a thread that left its wait and still runs keeps it:
	// there the line is read again too.
	var before uint64
	var err error
	if p.sched {
		if before, err = p.switches(task); err != nil {
			return tw
		}
	}
	first, err := readSyscall(p.r, task)
	if err != nil || first.Running || first.Nr < 0 {
		return tw
	}
	tw.Args = first.Args
	call, ok := p.arch.Lookup(first.Nr)
	if !ok {
		return tw
	}
	tw.Call = call
	if s.State == 'T' || s.State == 't' || first.SP <= math.MaxUint32 {
		return tw
	}
	if !p.sched {
		if before, err = p.switches(task); err != nil {
			return tw
		}
	}
	if !p.wants(s.PID, call, first.Args) {
		return tw
	}
	if !p.sched {
		again, err := readSyscall(p.r, task)
		if err != nil || again != first {
			return tw
		}
	}
	after, err := p.switches(task)
	if err != nil || after != before {
		return tw
	}
	tw.Waiting = true
	tw.Switches = after
	tw.Timeout, tw.HasTimeout = p.waitTimeout(s.PID, call, first.Args)
	return tw
}

var voluntarySwitches = []byte("voluntary_ctxt_switches:")

// switches reads voluntary_ctxt_switches from a task's status.
func (p *prober) switches(task string) (uint64, error) {
	if p.sched {
		b, err := p.readShared(task + "/schedstat")
		if err != nil {
			return 0, err
		}
		return parseSchedstat(b)
	}
	b, err := p.readShared(task + "/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, voluntarySwitches); ok {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, errNoSwitches
}

var errNoSwitches = errors.New("linux: status has no voluntary_ctxt_switches")

// parseSchedstat returns the third field of /proc/<pid>/task/<tid>/schedstat:
// how many times the task was scheduled in. A thread that stays asleep keeps
// it; one that ran in between, even without leaving its syscall, has a
// larger one.
func parseSchedstat(b []byte) (uint64, error) {
	fields := bytes.Fields(b)
	if len(fields) != 3 {
		return 0, errBadSchedstat
	}
	return strconv.ParseUint(string(fields[2]), 10, 64)
}

var errBadSchedstat = errors.New("linux: malformed schedstat")

// wants reports whether a thread blocked in call with args waits for input
// on the terminal.
func (p *prober) wants(pid int, call WaitCall, args [6]uint64) bool {
	switch call {
	case CallRead, CallReadv:
		return args[0] <= math.MaxInt32 && p.isTerminal(pid, int(args[0]))
	case CallSelect, CallPselect6:
		return p.selectWants(pid, int32(args[0]), args[1])
	case CallPoll, CallPpoll:
		return p.pollWants(pid, args[0], uint32(args[1]))
	case CallEpollWait, CallEpollPwait, CallEpollPwait2:
		return args[0] <= math.MaxInt32 && int32(args[2]) >= 1 &&
			p.epollWants(pid, int(args[0]), 0)
	}
	return false
}

// selectWants reads the read set of select(nfds, readfds, ...): an array of
// little-endian longs, so descriptor fd is bit fd%8 of byte fd/8.
func (p *prober) selectWants(pid int, nfds int32, readfds uint64) bool {
	if nfds < 1 || readfds == 0 || p.m == nil {
		return false
	}
	n := min(int(nfds), maxFDs)
	set, err := p.m.ReadMem(pid, readfds, (n+7)/8)
	if err != nil || len(set) < (n+7)/8 {
		return false
	}
	for fd := range n {
		if set[fd/8]&(1<<(fd%8)) != 0 && p.isTerminal(pid, fd) {
			return true
		}
	}
	return false
}

// pollWants reads poll's array of struct pollfd {int fd; short events;
// short revents;}, 8 bytes each, little-endian on both supported arches.
func (p *prober) pollWants(pid int, fds uint64, nfds uint32) bool {
	if nfds < 1 || fds == 0 || p.m == nil {
		return false
	}
	n := min(int(nfds), maxFDs)
	b, err := p.m.ReadMem(pid, fds, n*8)
	if err != nil || len(b) < n*8 {
		return false
	}
	for i := range n {
		fd := int32(binary.LittleEndian.Uint32(b[i*8:]))
		events := binary.LittleEndian.Uint16(b[i*8+4:])
		if fd >= 0 && events&(pollIn|pollPri|pollRdNorm) != 0 && p.isTerminal(pid, int(fd)) {
			return true
		}
	}
	return false
}

// epollWants reads the interest list of epfd. A target is a descriptor of
// pid unless it was closed after being added (then its number may name
// another file, which can only be a pipe, socket or file that resolves to the
// terminal if it is one). A target that is itself an epoll instance is
// followed, to maxEpollDepth.
func (p *prober) epollWants(pid, epfd, depth int) bool {
	b, err := p.r.ReadFile(strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(epfd))
	if err != nil {
		return false
	}
	for _, t := range parseEpollFdinfo(b) {
		if t.events&epollIn == 0 {
			continue
		}
		if p.isTerminal(pid, t.fd) {
			return true
		}
		if link := p.link(pid, t.fd); link == eventpollLink && t.fd != epfd && depth+1 < maxEpollDepth &&
			p.epollWants(pid, t.fd, depth+1) {
			return true
		}
	}
	return false
}

// sharedReader is a ProcReader that can lend its buffer: the result is
// valid until its next read.
type sharedReader interface {
	readShared(path string) ([]byte, error)
}

// readShared reads a file whose contents are parsed at once and dropped.
func (p *prober) readShared(path string) ([]byte, error) {
	if f, ok := p.r.(sharedReader); ok {
		return f.readShared(path)
	}
	return p.r.ReadFile(path)
}

func (p *prober) isTerminal(pid, fd int) bool {
	if st, ok := p.r.(fdStater); ok && p.term.Device != nil {
		id, char, err := st.StatFD(pid, fd)
		return err == nil && char && (id == *p.term.Device || id.Rdev == devTTY)
	}
	return p.term.matches(p.link(pid, fd))
}

// link resolves /proc/<pid>/fd/<fd> once per probe.
func (p *prober) link(pid, fd int) string {
	k := fdKey{pid, fd}
	if l, ok := p.links[k]; ok {
		return l
	}
	l, err := p.r.ReadLink(strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		l = ""
	}
	p.links[k] = l
	return l
}
