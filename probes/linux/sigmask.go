package linux

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// errNoMask: a status without the requested mask line (not a process's
// status).
var errNoMask = errors.New("linux: status has no such signal mask")

// CaughtSignals returns the set of signals pid has handlers for
// (/proc/<pid>/status SigCgt): bit n-1 stands for signal n.
func CaughtSignals(r ProcReader, pid int) (uint64, error) { return sigMask(r, pid, "SigCgt:") }

// IgnoredSignals returns the set of signals pid ignores (SigIgn), as
// CaughtSignals: a process started under nohup ignores SIGHUP.
func IgnoredSignals(r ProcReader, pid int) (uint64, error) { return sigMask(r, pid, "SigIgn:") }

// PendingSignals returns the signals sent to pid and not delivered yet, as
// CaughtSignals: those sent to the process (ShdPnd, where kill(2) queues
// them) and those sent to its main thread (SigPnd).
func PendingSignals(r ProcReader, pid int) (uint64, error) {
	shared, err := sigMask(r, pid, "ShdPnd:")
	if err != nil {
		return 0, err
	}
	thread, err := sigMask(r, pid, "SigPnd:")
	return shared | thread, err
}

func sigMask(r ProcReader, pid int, field string) (uint64, error) {
	b, err := r.ReadFile(strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, gone(pid, err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(field)); ok {
			set, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("linux: pid %d: %s %w", pid, field, err)
			}
			return set, nil
		}
	}
	return 0, fmt.Errorf("linux: pid %d: %s %w", pid, field, errNoMask)
}
