package linux

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// errNoNSpid: a status without an NSpid line (a kernel older than 4.1, or
// not a process's status).
var errNoNSpid = errors.New("linux: status has no NSpid line")

// NamespacePIDs returns pid's number in each pid namespace it is visible
// in, outermost first (/proc/<pid>/status NSpid): the last is its pid in
// its own namespace, 1 for the namespace's init.
func NamespacePIDs(r ProcReader, pid int) ([]int, error) {
	b, err := r.ReadFile(strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, gone(pid, err)
	}
	for line := range bytes.Lines(b) {
		v, ok := bytes.CutPrefix(line, []byte("NSpid:"))
		if !ok {
			continue
		}
		var out []int
		for _, f := range bytes.Fields(v) {
			n, err := strconv.Atoi(string(f))
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("linux: pid %d: malformed NSpid %q", pid, bytes.TrimSpace(v))
			}
			out = append(out, n)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("linux: pid %d: empty NSpid", pid)
		}
		return out, nil
	}
	return nil, fmt.Errorf("linux: pid %d: %w", pid, errNoNSpid)
}

// IsNamespaceInit reports whether pid is pid 1 of its own pid namespace
// (the last NSpid value is 1). The kernel shields such a process from the
// signals it has no handler for: it drops them, bar SIGKILL and SIGSTOP
// sent from an ancestor namespace.
func IsNamespaceInit(r ProcReader, pid int) (bool, error) {
	ns, err := NamespacePIDs(r, pid)
	if err != nil {
		return false, err
	}
	return ns[len(ns)-1] == 1, nil
}
