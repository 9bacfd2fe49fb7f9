package local

import (
	"os"
	"strconv"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// waitingReader looks, as the exact tier does, for a thread of the
// foreground group blocked reading the terminal, and names its command.
// It keeps no state (the send's follower is the send's own), so a console
// may look while a send runs.
func (s *session) waitingReader(pgid int) (string, bool) {
	if hostArch == linux.ArchUnsupported || len(s.term.Paths) == 0 || !s.inputConsumed() {
		return "", false
	}
	g, err := linux.ProbeGroup(linux.FS{}, linux.FS{}, hostArch, s.PID(), pgid, s.term)
	if err != nil {
		return "", false
	}
	w, ok := g.Waiting()
	return w.Comm, ok
}

// foregroundProgram names the foreground group's leader and its working
// folder, from /proc; empty where they cannot be read.
func foregroundProgram(pgid int) (program, cwd string) {
	if st, err := linux.ReadStat(linux.FS{}, pgid); err == nil {
		program = st.Comm
	}
	cwd, _ = os.Readlink("/proc/" + strconv.Itoa(pgid) + "/cwd")
	return program, cwd
}
