package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/teardown"
	"golang.org/x/sys/unix"
)

// Close's teardown: the shell's tree, the shell, a sweep of the
// terminal's session, then the terminal and the goroutines that used it.

// Close tears the tree down: every descendant and member of the shell's
// session first (teardown.Tree: TERM, grace, rescan, KILL, verify), then the
// shell (HUP and TERM, grace, KILL), then a sweep of what the shell left in
// its session, then the terminal. With Options.Subreaper, both passes also
// take the orphans the host adopted that carry the session's tag, and reap
// them. A failed close leaves what survived running and may be retried.
func (s *session) Close(ctx context.Context, reason string) (messages.CloseReport, error) {
	s.closing.mu.Lock()
	defer s.closing.mu.Unlock()
	if s.closing.done {
		return s.closing.report, nil
	}
	opts := teardown.Options{Grace: messages.Ms(s.cfg.DisposeGraceMs), Log: s.log, AdoptTag: s.adoptTag}
	report := messages.CloseReport{}
	fail := func(survivors []int, err error) (messages.CloseReport, error) {
		report.Survivors = survivors
		return report, &messages.CleanupError{Reason: reason, Survivors: survivors, Err: err}
	}
	if !s.exited() {
		if survivors, err := s.killShellTree(ctx, opts, &report); err != nil {
			return fail(survivors, err)
		}
	}
	if survivors, err := s.sweepSession(ctx, opts, &report); err != nil {
		return fail(survivors, err)
	}
	s.closeTerminal()
	// The pump has returned: the stream is complete, its record ends.
	rec, err := s.stream.closeSink()
	if err != nil {
		// The tree is quiet, so the close stands; what the record lost
		// is said where an operator reads it.
		s.log.Error().Err(err).Msg("the session's record is incomplete")
	}
	report.Recording = rec
	s.closing.done = true
	report.Status = s.Status()
	s.closing.report = report
	// Nothing started under this session's sandbox runs any more: the
	// owner's mode may change.
	s.lease.Release()
	if s.orphans != nil {
		s.orphans.remove(s.PID())
	}
	return report, nil
}

// killShellTree is Close's first pass, while the shell runs: its tree,
// then the shell itself. Under a wrapper the shell is pid 1 of the
// sandbox's pid namespace, so the tree is the whole sandbox, orphans
// included. A wrapped shell that exited by itself a moment ago was reaped
// by the wrapper (ErrRootChanged): the kernel killed its namespace with
// it, and the sweep (sweepSession) checks. It adds what it killed to
// report, and returns what survived when it failed.
func (s *session) killShellTree(ctx context.Context, opts teardown.Options, report *messages.CloseReport) (survivors []int, err error) {
	tr, err := teardown.Tree(ctx, s.shell, opts)
	report.Killed = append(report.Killed, tr.Killed...)
	if err != nil && !(s.wrapped && errors.Is(err, teardown.ErrRootChanged)) {
		return tr.Survivors, err
	}
	if err := s.stopShell(ctx, opts.Grace); err != nil {
		return append(tr.Survivors, s.PID()), err
	}
	report.Killed = append(report.Killed, s.PID())
	return nil, nil
}

// sweepSession is Close's second pass, once the shell (and its wrapper) is
// gone and reaped. It sweeps the terminal's session by session id (the
// started process leads it): jobs it left when it exited by itself,
// anything forked between the first pass and its death, and (with a
// subreaper host) the killed members it had not reaped, which re-parented
// to the host as zombies. It adds what it killed to report, and returns
// what survived when it failed.
func (s *session) sweepSession(ctx context.Context, opts teardown.Options, report *messages.CloseReport) (survivors []int, err error) {
	opts.RootReaped = true
	tr, err := teardown.Tree(ctx, s.identity, opts)
	report.Killed = append(report.Killed, tr.Killed...)
	if err != nil {
		return tr.Survivors, err
	}
	return nil, nil
}

// closeTerminal lets go of the terminal once nothing holds its slave but
// us, and joins the goroutines that used it. Every holder of the slave is
// gone, so the pump sees EIO and returns; closing the master also
// interrupts it if a straggler held the slave.
func (s *session) closeTerminal() {
	s.slave.mu.Lock()
	closeSlave(s.slave.fd)
	s.slave.fd = -1
	s.slave.mu.Unlock()
	s.follow.Close()
	s.closeLeftovers()
	s.masterClosed.Store(true)
	_ = s.master.Close()
	s.stopReplies()
	s.replies.wg.Wait()
	<-s.pumpDone
}

// stopShell ends the shell. An interactive bash ignores TERM, so HUP (what a
// terminal hang-up sends) goes first; TERM follows for other shells, then
// KILL after the grace. The started process's pid cannot be recycled before
// Wait reaps it, so signalling it directly is safe. A wrapped shell is the
// wrapper's child, reaped by the wrapper, so it is signalled by identity
// (pidfd); the wrapper exits when it does. As pid 1 of its namespace it
// gets only signals it handles (bash handles HUP) and SIGKILL.
func (s *session) stopShell(ctx context.Context, grace time.Duration) error {
	p := s.cmd.Process
	signal := func(sig unix.Signal) {
		if s.wrapped {
			_ = teardown.ProcSignaler{}.Signal(s.shell, sig)
			return
		}
		_ = p.Signal(sig)
	}
	signal(unix.SIGHUP)
	signal(unix.SIGTERM)
	signal(unix.SIGCONT)
	if s.waitFor(ctx, grace) {
		return nil
	}
	signal(unix.SIGKILL)
	if s.wrapped {
		_ = p.Signal(unix.SIGKILL)
	}
	if s.waitFor(ctx, grace) {
		return nil
	}
	return fmt.Errorf("shell %d did not exit after SIGKILL", s.PID())
}

func (s *session) waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.waitDone:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}
