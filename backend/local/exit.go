package local

import (
	"errors"
	"os/exec"
	"syscall"

	"github.com/ptyactor/ptyactor/messages"
	"golang.org/x/sys/unix"
)

// The shell's own end: the goroutine that reaps it (wait) and what the
// session knows of it since (Status, exited). Close, which ends it, is in
// close.go; awaitExit per OS in exit_*.go.

// wait reaps the shell and starts the exit drain.
func (s *session) wait() {
	awaitExit(s.cmd.Process.Pid)
	err := s.cmd.Wait()
	st := messages.ExitedWith(0)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st = messages.ExitedBySignal(unix.SignalName(ws.Signal()))
		} else {
			st = messages.ExitedWith(ee.ExitCode())
		}
	} else if err != nil {
		s.log.Warn().Err(err).Msg("wait for shell")
		st = messages.SessionStatus{Exited: true}
	}
	s.mu.Lock()
	s.exit.status = st
	s.stream.exited(st)
	s.mu.Unlock()
	close(s.waitDone)
	// Wake the pump: it drains what the shell wrote before exiting and
	// reports the exit.
	s.poke()
}
func (s *session) Status() messages.SessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit.status
}
func (s *session) exited() bool {
	select {
	case <-s.waitDone:
		return true
	default:
		return false
	}
}
