//go:build linux

package local

import (
	"strconv"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// execWait bounds how long a signal waits for a command the shell forked
// to exec (see awaitExec), and so how long Signal may take. The gap is
// normally well under a millisecond; on a loaded machine the child may not
// run for tens of milliseconds (seen: over 50 ms with both cores busy), so
// the bound is generous. Only a child that still holds the shell's own
// signal handlers is waited for, which is a child that has not yet reached
// its exec: a subshell or a script sets its own handlers at once.
const execWait = time.Second

// awaitExec waits, briefly, until the leader of the foreground group pgid
// runs its own program. The shell forks each command, and the child makes
// its group the terminal's foreground group before it execs: until the
// exec it still runs the shell's code under the shell's signal handlers
// (bash restores the defaults just before exec), which swallow SIGINT,
// SIGTERM and SIGHUP and ignore SIGTSTP, and the command then runs as if
// it had never been signalled. A child of the shell that still runs the
// shell's executable with exactly the shell's caught-signal set is
// therefore waited for, up to execWait. A subshell or a bash script runs
// the same executable but installs its own, smaller set of handlers, and
// is signalled at once. Only the leader is checked: the other members of a
// pipeline end when it does.
func (s *session) awaitExec(pgid int) {
	shell := s.PID()
	if pgid == shell {
		return
	}
	fs := linux.FS{}
	shellExe, err := fs.ReadLink("/" + strconv.Itoa(shell) + "/exe")
	if err != nil {
		return
	}
	shellCaught, err := linux.CaughtSignals(fs, shell)
	if err != nil {
		return
	}
	deadline := time.Now().Add(execWait)
	for {
		st, err := linux.ReadStat(fs, pgid)
		if err != nil || st.PPID != shell {
			return
		}
		exe, err := fs.ReadLink("/" + strconv.Itoa(pgid) + "/exe")
		if err != nil || exe != shellExe {
			return
		}
		caught, err := linux.CaughtSignals(fs, pgid)
		if err != nil || caught != shellCaught || time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Microsecond) // the poll's grain, not a guess
	}
}

// flushInput discards what was written to the terminal and not read yet
// (TCIFLUSH on our own handle on the pts).
func (s *session) flushInput() {
	s.slaveMu.RLock()
	defer s.slaveMu.RUnlock()
	if s.slave >= 0 {
		_ = unix.IoctlSetInt(s.slave, unix.TCFLSH, unix.TCIFLUSH)
	}
}
