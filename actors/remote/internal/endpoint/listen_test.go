package endpoint

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// listens reports whether this process holds a listening TCP socket on
// port: the kernel's socket table (/proc/net/tcp, tcp6) names the
// listener's inode, and this process's descriptors say whether it is ours.
// A dial cannot tell: on a busy machine another process may bind the port
// the moment it is free. ok is false where /proc cannot say.
func listens(t *testing.T, port int) (listening, ok bool) {
	t.Helper()
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			return false, false
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ... inode (index 9)
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			_, hexPort, found := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); found && err == nil && int(p) == port {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if inode, found := strings.CutPrefix(link, "socket:["); err == nil && found && inodes[strings.TrimSuffix(inode, "]")] {
			return true, true
		}
	}
	return false, true
}
