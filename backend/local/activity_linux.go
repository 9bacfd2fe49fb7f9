package local

import (
	"os"
	"strconv"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/probes/linux"
	"golang.org/x/sys/unix"
)

// waitingReader looks, as the exact tier does, for a thread of the
// foreground group blocked reading the terminal, and names its command
// and what the kernel shows of its read (the terminal's modes, the wait's
// own timeout) for the badge. It keeps no state (the send's follower is
// the send's own), so a console may look while a send runs.
func (s *session) waitingReader(pgid int) (string, messages.Reading, bool) {
	if hostArch == linux.ArchUnsupported || len(s.term.Paths) == 0 || !s.inputConsumed() {
		return "", messages.Reading{}, false
	}
	g, err := linux.ProbeGroup(linux.FS{}, linux.FS{}, hostArch, s.PID(), pgid, s.term)
	if err != nil {
		return "", messages.Reading{}, false
	}
	w, ok := g.Waiting()
	if !ok {
		return "", messages.Reading{}, false
	}
	r := messages.Reading{Shell: pgid == s.PID(), Timed: w.HasTimeout}
	r.Canonical, r.Echo = s.lineMode()
	return w.Comm, r, true
}

// lineMode reads the terminal's ICANON and ECHO on our handle on the
// pts; unreadable reads as canonical with echo (a plain line read).
func (s *session) lineMode() (canonical, echo bool) {
	s.slave.mu.RLock()
	defer s.slave.mu.RUnlock()
	if s.slave.fd < 0 {
		return true, true
	}
	t, err := unix.IoctlGetTermios(s.slave.fd, unix.TCGETS)
	if err != nil {
		return true, true
	}
	return t.Lflag&unix.ICANON != 0, t.Lflag&unix.ECHO != 0
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
