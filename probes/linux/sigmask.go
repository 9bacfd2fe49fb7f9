package linux

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

var sigCgt = []byte("SigCgt:")

// errNoSigCgt: a status without a SigCgt line (not a process's status).
var errNoSigCgt = errors.New("linux: status has no SigCgt")

// CaughtSignals returns the set of signals pid has handlers for
// (/proc/<pid>/status SigCgt): bit n-1 stands for signal n.
func CaughtSignals(r ProcReader, pid int) (uint64, error) {
	b, err := r.ReadFile(strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, gone(pid, err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, sigCgt); ok {
			set, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("linux: pid %d: SigCgt: %w", pid, err)
			}
			return set, nil
		}
	}
	return 0, fmt.Errorf("linux: pid %d: %w", pid, errNoSigCgt)
}
