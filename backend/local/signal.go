package local

import (
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
	"golang.org/x/sys/unix"
)

// Signal picks the terminal's foreground group and signals it
// (signalGroup); how the signal reaches the command's program past the
// shell's handlers is per OS, in signal_*.go.

var signalNumbers = map[messages.Signal]unix.Signal{
	messages.SIGINT:  unix.SIGINT,
	messages.SIGTERM: unix.SIGTERM,
	messages.SIGKILL: unix.SIGKILL,
	messages.SIGTSTP: unix.SIGTSTP,
	messages.SIGHUP:  unix.SIGHUP,
}

func (s *session) Signal(sig messages.Signal) (messages.SignalResult, error) {
	num, ok := signalNumbers[sig]
	if !ok {
		return messages.SignalResult{}, messages.InvalidArgument("unsupported signal %q", sig)
	}
	// The group resolved a moment ago may exit before the signal lands
	// (ESRCH): the terminal then has a new foreground group, which is the
	// one the caller means. Resolve again, a few times at most.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var pgid int
		pgid, err = s.Foreground()
		if err != nil {
			return messages.SignalResult{}, err
		}
		// Under a wrapper, the wrapper's group holds the terminal until
		// the shell takes it; killing it would kill the shell too.
		if num == unix.SIGKILL && (pgid == s.PID() || pgid == s.identity.PID) {
			return messages.SignalResult{}, messages.ErrRefuseKillShell
		}
		var dropped string
		if dropped, err = s.signalGroup(pgid, num); err == nil {
			return messages.SignalResult{Delivered: dropped == "", TargetPgid: pgid, Reason: dropped}, nil
		}
		if !errors.Is(err, unix.ESRCH) {
			return messages.SignalResult{}, fmt.Errorf("%w: kill(-%d, %s): %w", messages.ErrTransport, pgid, sig, err)
		}
		err = fmt.Errorf("%w: group %d of terminal %d exited before %s landed and the shell has not taken the terminal back yet: %w",
			messages.ErrNoForeground, pgid, s.PID(), sig, err)
	}
	// The group is gone and the terminal still names it: there is no
	// program to signal, which the caller may retry; never a guess.
	return messages.SignalResult{}, err
}

// signalGroup sends num to the foreground group pgid so that it reaches
// the command's program, not the shell's code the command's process runs
// until its exec. dropped is non-empty when the kernel drops the signal for
// a member of the group (see initDrop): it says which and why.
func (s *session) signalGroup(pgid int, num unix.Signal) (dropped string, err error) {
	var child preExec
	if num != unix.SIGKILL {
		// A command the shell forked a moment ago would lose the signal
		// to the shell's handlers until it execs.
		child = s.awaitExec(pgid)
	}
	// Read before the kill: a pid 1 the signal does reach may be gone
	// after it. It is sent all the same: the group's other members take
	// it, and a handler installed meanwhile would too.
	dropped = s.initDrop(pgid, num)
	if num == unix.SIGINT {
		// What the terminal does for ^C: input not read yet goes with the
		// interrupt, or a line editor that drops the line it holds would
		// then read and run the rest of it.
		s.flushInput(pgid)
	}
	if err := unix.Kill(-pgid, num); err != nil {
		return "", err
	}
	// awaitExec cannot tell every child still on its way to its exec from
	// a subshell: one that took the signal in the shell's handlers and
	// then exec'd gets it again.
	s.redeliver(child, pgid, num)
	return dropped, nil
}

// WakeShell sends SIGWINCH to the shell alone (backend.ShellWaker):
// readline redraws its line on it and bash handles a pending interrupt;
// nothing else in the session sees it.
func (s *session) WakeShell() error {
	if err := unix.Kill(s.PID(), unix.SIGWINCH); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("%w: kill(%d, SIGWINCH): %w", messages.ErrTransport, s.PID(), err)
	}
	return nil
}
