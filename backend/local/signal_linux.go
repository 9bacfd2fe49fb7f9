//go:build linux

package local

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// execWait bounds how long a signal waits for a command the shell forked
// to exec (see awaitExec), and how long its delivery is followed afterwards
// (see redeliver), and so how long Signal may take. The gap is normally
// well under a millisecond; on a loaded machine the child may not run for
// tens of milliseconds (seen: over 50 ms with both cores busy), so the
// bound is generous. Only a child of the shell that has not exec'd yet is
// waited for or followed.
const execWait = time.Second

// preExec is the leader of a foreground group that was still the shell's
// forked child, running the shell's program, when a signal went to its
// group; the zero value is none. The child keeps the shell's executable and
// its command line (the memory fork copied) until it execs.
type preExec struct {
	id       linux.Identity
	shellExe string
	shellCmd []byte // the shell's /proc cmdline
}

// awaitExec waits, briefly, until the leader of the foreground group pgid
// runs its own program. The shell forks each command, and the child makes
// its group the terminal's foreground group before it execs: until the
// exec it still runs the shell's code under the shell's signal handlers
// (bash restores the defaults one by one just before exec), which swallow
// SIGINT, SIGTERM and SIGHUP and ignore SIGTSTP, and the command then runs
// as if it had never been signalled. A child of the shell that has not
// exec'd and still has exactly the shell's caught-signal set is therefore
// waited for, up to execWait.
//
// A child whose set changed is no longer waited for, but that does not
// prove it will take the signal: bash's child restores the defaults one at
// a time, and midway (SIGINT still caught, most others restored) it has
// the very set a subshell keeps for its whole life (SIGINT, SIGCHLD,
// SIGWINCH), so no set tells the two apart. Such a leader is returned, and
// redeliver follows it after the signal. A leader with children of its own
// is a subshell running its commands (on its way to exec a child forks
// nothing, bar a command substitution in a redirection) and is not
// returned; only the leader is checked: the other members of a pipeline
// end when it does.
func (s *session) awaitExec(pgid int) preExec {
	shell := s.PID()
	if pgid == shell {
		return preExec{}
	}
	fs := linux.FS{}
	shellExe, err := fs.ReadLink("/" + strconv.Itoa(shell) + "/exe")
	if err != nil {
		return preExec{}
	}
	shellCmd, err := fs.ReadFile(strconv.Itoa(shell) + "/cmdline")
	if err != nil {
		return preExec{}
	}
	shellCaught, err := linux.CaughtSignals(fs, shell)
	if err != nil {
		return preExec{}
	}
	deadline := time.Now().Add(execWait)
	for {
		st, err := linux.ReadStat(fs, pgid)
		if err != nil || st.PPID != shell {
			return preExec{}
		}
		if execed, err := hasExeced(fs, pgid, shellExe, shellCmd); err != nil || execed {
			return preExec{}
		}
		caught, err := linux.CaughtSignals(fs, pgid)
		if err != nil {
			return preExec{}
		}
		if caught != shellCaught || time.Now().After(deadline) {
			if hasChildren(fs, pgid) {
				return preExec{}
			}
			return preExec{id: st.Identity(), shellExe: shellExe, shellCmd: shellCmd}
		}
		time.Sleep(200 * time.Microsecond) // the poll's grain, not a guess
	}
}

// redeliver follows the leader awaitExec returned after sig went to its
// group pgid, until it exits, stops or execs, for at most execWait. A
// leader that exec'd and lives, with sig no longer pending, took the signal
// in the shell's handlers before its exec: the program it runs now never
// saw it, so the group gets sig again. (A signal still pending at the exec
// reaches the new program with its default action, before any of its code
// runs, so a program alive after the exec did not take it there.) The
// signal goes to the same group only, never to a group resolved anew: a
// late resend that finds the group gone must not reach the shell. A
// subshell that survives the signal without exec'ing is followed to the
// bound and not signalled again.
func (s *session) redeliver(p preExec, pgid int, sig unix.Signal) {
	if p.id.PID == 0 {
		return
	}
	fs := linux.FS{}
	deadline := time.Now().Add(execWait)
	for !time.Now().After(deadline) {
		st, err := linux.ReadStat(fs, p.id.PID)
		if err != nil || st.Identity() != p.id || !st.Alive() || st.State == 'T' || st.State == 't' {
			return
		}
		execed, err := hasExeced(fs, p.id.PID, p.shellExe, p.shellCmd)
		if err != nil {
			return
		}
		if !execed {
			time.Sleep(200 * time.Microsecond) // the poll's grain, not a guess
			continue
		}
		pending, err := linux.PendingSignals(fs, p.id.PID)
		if err != nil || pending&(1<<(sig-1)) != 0 {
			return
		}
		s.log.Debug().Int("pgid", pgid).Str("signal", unix.SignalName(sig)).Msg("the leader took the signal in the shell's handlers before its exec; signalling its group again")
		_ = unix.Kill(-pgid, sig)
		return
	}
}

// initDrop says why num, about to go to the group pgid, will not reach a
// member that is pid 1 of its pid namespace: the kernel drops any signal
// sent to a namespace's init that the init has no handler for (it ignores
// it, or its action is the default), bar SIGKILL and SIGSTOP sent from an
// ancestor namespace, which ours is. In the sandbox the shell is that pid
// 1, and so is the program it exec'd ("exec sleep 60"): SIGTERM, SIGINT,
// SIGHUP and SIGTSTP then do nothing. The answer is "" when every member
// takes num, or when /proc cannot tell (the signal is then reported
// delivered, as before).
func (s *session) initDrop(pgid int, num unix.Signal) string {
	if num == unix.SIGKILL {
		return ""
	}
	fs := linux.FS{}
	stats, err := linux.ListStats(fs)
	if err != nil {
		return ""
	}
	bit := uint64(1) << (num - 1)
	var (
		init   linux.Stat
		found  bool
		others int
	)
	for _, st := range stats {
		if st.PGRP != pgid || !st.Alive() {
			continue
		}
		if !found {
			isInit, ierr := linux.IsNamespaceInit(fs, st.PID)
			caught, cerr := linux.CaughtSignals(fs, st.PID)
			if ierr == nil && cerr == nil && isInit && caught&bit == 0 {
				init, found = st, true
				continue
			}
		}
		others++
	}
	if !found {
		return ""
	}
	name := unix.SignalName(num)
	how := "has no handler for " + name
	if ignored, err := linux.IgnoredSignals(fs, init.PID); err == nil && ignored&bit != 0 {
		how = "ignores " + name
	}
	var why string
	if init.PID == s.PID() {
		why = fmt.Sprintf("%s (pid %d) runs in the shell's process, pid 1 of the sandbox's pid namespace, and %s: the kernel drops the signal. "+
			"SIGKILL at the shell's process is refused; closing the session ends it.", init.Comm, init.PID, how)
	} else {
		why = fmt.Sprintf("%s (pid %d) is pid 1 of a pid namespace and %s: the kernel drops the signal. SIGKILL ends it.", init.Comm, init.PID, how)
	}
	if others > 0 {
		why += fmt.Sprintf(" The group's %d other process(es) were sent it.", others)
	}
	return why
}

// hasExeced reports whether pid, a child of the shell, no longer runs the
// shell's program with the shell's command line: it exec'd since the fork.
func hasExeced(fs linux.FS, pid int, shellExe string, shellCmd []byte) (bool, error) {
	exe, err := fs.ReadLink("/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false, err
	}
	cmd, err := fs.ReadFile(strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false, err
	}
	return exe != shellExe || !bytes.Equal(cmd, shellCmd), nil
}

// hasChildren reports whether pid has children of its own; false when the
// kernel does not list them (the caller then assumes the riskier case).
func hasChildren(fs linux.FS, pid int) bool {
	b, err := fs.ReadFile(strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	return err == nil && len(bytes.TrimSpace(b)) > 0
}

// flushInput discards what was written to the terminal and not read yet
// (TCIFLUSH on our own handle on the pts), and the answers to the
// program's queries still waiting to be written, in one step with the
// answer writer: none written before the flush survives it. pgid is the
// group the SIGINT goes to: when its leader dies of it (it neither
// catches nor ignores SIGINT), the answers to its queries still being
// read are dropped too.
func (s *session) flushInput(pgid int) {
	mute := 0
	fs := linux.FS{}
	caught, cerr := linux.CaughtSignals(fs, pgid)
	ignored, ierr := linux.IgnoredSignals(fs, pgid)
	if cerr == nil && ierr == nil && (caught|ignored)&(1<<(unix.SIGINT-1)) == 0 {
		mute = pgid
	}
	s.slave.mu.RLock()
	defer s.slave.mu.RUnlock()
	s.flushReplies(mute, func() {
		if s.slave.fd >= 0 {
			_ = unix.IoctlSetInt(s.slave.fd, unix.TCFLSH, unix.TCIFLUSH)
		}
	})
}
