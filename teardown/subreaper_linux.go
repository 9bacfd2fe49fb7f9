//go:build linux

package teardown

import (
	"errors"
	"fmt"
	"os"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process orphaned anywhere below it re-parents
// to it instead of to init, so Options.AdoptTag can find daemons that left
// their session. The setting is process-wide and lasts for the life of the
// process; calling it again is harmless. The caller then owns every orphan
// it adopts and must reap them; Tree reaps the members it adopted.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("teardown: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// reapChild reaps pid if it is a zombie child of the calling process. It
// waits for that one pid only, never -1, so it cannot take the exit status
// of a child os/exec is waiting for. It reports false when there was
// nothing to reap (not our child, or not exited yet).
func reapChild(pid int) (bool, error) {
	if err := validPID(pid); err != nil {
		return false, err
	}
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("teardown: wait4 %d: %w", pid, err)
		}
		return got == pid, nil
	}
}

// ReapMembers reaps the calling process's zombie children that are members,
// not leaders, of a POSIX session that ours names. A subreaper adopts the
// orphans of its sessions' double forks; when they exit before their session
// closes, nothing else would ever reap them. Membership is the proof: the
// kernel does not reuse a pid while it is any process's session id, so a
// member of a session whose leader the caller started is that session's.
// Session leaders are never taken here, so a child os/exec waits for (a
// shell leads its own session) keeps its exit status. It returns the pids
// it reaped.
func ReapMembers(proc linux.ProcReader, ours func(sid int) bool) ([]int, error) {
	if proc == nil {
		proc = linux.FS{}
	}
	stats, err := linux.ListStats(proc)
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var reaped []int
	for _, s := range stats {
		if s.PPID != self || !s.Reapable() || s.PID == s.Session || !ours(s.Session) {
			continue
		}
		ok, err := reapChild(s.PID)
		if err != nil {
			return reaped, err
		}
		if ok {
			reaped = append(reaped, s.PID)
		}
	}
	return reaped, nil
}
