package mcpserver

import (
	"os"
	"strconv"
	"strings"

	linux "github.com/ptyactor/ptyactor/probes/linux"
)

// foregroundComm is the command name of the leader of the terminal's
// foreground process group, as the shell's /proc stat shows it.
func foregroundComm(shell int) string {
	st, err := linux.ReadStat(linux.FS{}, shell)
	if err != nil || st.TPGID <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(st.TPGID) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// alive reports whether pid names a live (non-zombie) process.
func alive(pid int) bool {
	st, err := linux.ReadStat(linux.FS{}, pid)
	return err == nil && st.Alive()
}

// sessionMembers lists live processes of POSIX session sid.
func sessionMembers(sid int) []int {
	ps, err := linux.ListStats(linux.FS{})
	if err != nil {
		return nil
	}
	var out []int
	for _, s := range ps {
		if s.Session == sid && s.Alive() {
			out = append(out, s.PID)
		}
	}
	return out
}
