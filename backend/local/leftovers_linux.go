//go:build linux

package local

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

var _ backend.LeftoverLister = (*session)(nil)

// Signals' bits in a signal mask.
const (
	sighupBit  = 1 << (unix.SIGHUP - 1)
	sigchldBit = 1 << (unix.SIGCHLD - 1)
)

// Leftovers lists the shell's children: what its commands left running
// (a job sent to the background, nohup, disown). The shell's children file
// stays open, so a prompt with nothing left costs one pread. A child that
// re-parented away (a setsid or double fork) is not its child any more:
// under the subreaper the teardown still finds it by its session tag.
func (s *session) Leftovers() (procs []messages.Process, starting bool) {
	s.kids.mu.Lock()
	defer s.kids.mu.Unlock()
	s.openChildren()
	if s.kids.fd < 0 {
		return nil, false
	}
	adopted := s.adoptedLeftovers()
	var buf [1024]byte
	n, err := unix.Pread(s.kids.fd, buf[:], 0)
	if err != nil || n == 0 || len(bytes.TrimSpace(buf[:n])) == 0 {
		return adopted, false
	}
	// Something was left: what the shell itself runs tells a child that
	// has not exec'd its own program yet.
	fs := linux.FS{}
	sh := readShellProgram(fs, s.shell.PID)
	out := adopted
	for _, f := range bytes.Fields(buf[:n]) {
		pid, err := strconv.Atoi(string(f))
		if err != nil {
			continue
		}
		st, err := linux.ReadStat(linux.FS{}, pid)
		if err != nil || !st.Alive() {
			continue // exited meanwhile
		}
		out = append(out, s.leftover(pid, st))
		if sh.startingChild(fs, pid, st) {
			starting = true
		}
	}
	return out, starting
}

// openChildren opens the shell's children file on the first Leftovers
// (under kids.mu) and keeps it open: later prompts cost one pread. It
// leaves kids.fd -1 when the file cannot be opened.
func (s *session) openChildren() {
	if s.kids.fd != 0 {
		return
	}
	s.kids.fd = -1
	path := "/proc/" + strconv.Itoa(s.shell.PID) + "/task/" + strconv.Itoa(s.shell.PID) + "/children"
	if fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		s.kids.fd = fd
	}
}

// leftover is the shell's child pid (its stat st) as the receipt lists it:
// detached when it left the terminal's session, ignores SIGHUP, or is on
// its way to either.
func (s *session) leftover(pid int, st linux.Stat) messages.Process {
	p := messages.Process{PID: pid, Command: st.Comm, Detached: st.Session != s.identity.PID}
	if ign, err := linux.IgnoredSignals(linux.FS{}, pid); err == nil && ign&sighupBit != 0 {
		p.Detached = true
	}
	if st.Comm == "nohup" || st.Comm == "setsid" {
		// Caught an instant before it ignores SIGHUP or leaves the
		// session, which is all it is there to do.
		p.Detached = true
	}
	return p
}

// shellProgram is what the shell itself runs, read once per Leftovers: a
// child that still runs it has not exec'd its own program yet.
type shellProgram struct {
	exe       string
	comm      string
	caught    uint64 // the shell's caught signals
	caughtErr error  // caught could not be read
}

func readShellProgram(fs linux.FS, pid int) shellProgram {
	var sh shellProgram
	sh.exe, _ = fs.ReadLink("/" + strconv.Itoa(pid) + "/exe")
	if st, err := linux.ReadStat(fs, pid); err == nil {
		sh.comm = st.Comm
	}
	sh.caught, sh.caughtErr = linux.CaughtSignals(fs, pid)
	return sh
}

// startingChild reports whether the shell's child pid (its stat st) is a
// job still on its way to its exec, which the receipt waits for
// (AwaitLeftovers).
func (sh shellProgram) startingChild(fs linux.FS, pid int, st linux.Stat) bool {
	exe, err := fs.ReadLink("/" + strconv.Itoa(pid) + "/exe")
	if st.Comm != sh.comm && (err != nil || exe != sh.exe) {
		return false
	}
	// Still the shell's program: a job forked an instant ago, or a
	// subshell job. The first holds exactly the shell's handlers until
	// bash restores the defaults, then (redirections, the exec itself)
	// catches no SIGCHLD; a subshell catches SIGCHLD from the start, to
	// wait for its own commands. Caught while bash restores them one by
	// one, the job's handlers look like a subshell's; but it runs (R, or D
	// on a page fault) and has no children, while a subshell waiting on
	// its commands has them or sleeps. A subshell busy with builtins looks
	// the same and is waited for, within the bound.
	caught, err := linux.CaughtSignals(fs, pid)
	return sh.caughtErr == nil && err == nil &&
		(caught == sh.caught || caught&sigchldBit == 0 ||
			(st.State == 'R' || st.State == 'D') && !hasChildren(fs, pid))
}

// leftoverExecWait bounds how long a receipt waits for a job forked an
// instant before the prompt to run its own program: as long as a signal
// waits for one (execWait), since on a loaded machine the child may not
// run for tens of milliseconds. A subshell job, which never execs, is not
// waited for once it runs (see Leftovers).
const leftoverExecWait = execWait

// AwaitLeftovers lists again once no child runs the shell's program any
// more, or the bound passed.
func (s *session) AwaitLeftovers() []messages.Process {
	deadline := time.Now().Add(leftoverExecWait)
	for {
		procs, starting := s.Leftovers()
		if !starting || time.Now().After(deadline) {
			return procs
		}
		time.Sleep(200 * time.Microsecond) // the poll's grain, not a guess
	}
}

// closeLeftovers releases the children files (Close).
func (s *session) closeLeftovers() {
	s.kids.mu.Lock()
	defer s.kids.mu.Unlock()
	for _, fd := range []*int{&s.kids.fd, &s.kids.hostFD} {
		if *fd > 0 {
			_ = unix.Close(*fd)
		}
		*fd = -1
	}
}

// adoptedLeftovers lists what re-parented to the host (the subreaper) and
// carries this session's tag: a setsid or double-forked job that left the
// shell's children. The host's children file is read each time (one pread),
// but environments only when it changed, for pids not seen before.
func (s *session) adoptedLeftovers() []messages.Process {
	if s.adoptTag == "" {
		return nil
	}
	if s.kids.hostFD == 0 {
		s.kids.hostFD = -1
		self := strconv.Itoa(os.Getpid())
		if fd, err := unix.Open("/proc/"+self+"/task/"+self+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			s.kids.hostFD = fd
		}
	}
	if s.kids.hostFD < 0 {
		return nil
	}
	buf := make([]byte, 8192)
	n, err := unix.Pread(s.kids.hostFD, buf, 0)
	if err != nil {
		return nil
	}
	if string(buf[:n]) != s.kids.host {
		s.kids.host = string(buf[:n])
		seen := map[int]bool{}
		for _, f := range bytes.Fields(buf[:n]) {
			pid, err := strconv.Atoi(string(f))
			if err != nil || pid == s.shell.PID || pid == s.identity.PID {
				continue
			}
			ours, ok := s.kids.adopted[pid]
			if !ok {
				var known bool
				if ours, known = hasEnv(pid, s.adoptTag); !known {
					// Read mid-exec (an empty environment) or not at all:
					// read the children again next time, to ask again.
					s.kids.host = ""
					continue
				}
			}
			seen[pid] = ours
		}
		s.kids.adopted = seen
	}
	var out []messages.Process
	for pid, ours := range s.kids.adopted {
		if !ours {
			continue
		}
		if st, err := linux.ReadStat(linux.FS{}, pid); err == nil && st.Alive() {
			out = append(out, messages.Process{PID: pid, Command: st.Comm, Detached: true})
		}
	}
	return out
}

// hasEnv reports whether pid's environment holds the entry kv; known is
// false when the environment could not be read or read empty, which a
// process in the middle of an exec shows for a moment.
func hasEnv(pid int, kv string) (has, known bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(b) == 0 {
		return false, false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == kv {
			return true, true
		}
	}
	return false, true
}
