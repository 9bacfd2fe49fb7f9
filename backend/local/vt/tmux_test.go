package vt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tmuxResult is what tmux shows: the screen, the joined transcript
// (history and screen), the cursor and whether the alternate screen is on.
type tmuxResult struct {
	screen     []string
	transcript []string
	cx, cy     int
	alt        bool
}

var tmuxServers atomic.Int64

// tmuxServer is a tmux server of one test's own (a private -L socket
// under the test's temporary directory).
type tmuxServer struct {
	t    *testing.T
	sock string
	conf string
	env  []string
}

// startTmux starts a server in dir, with the common settings plus conf
// (tmux.conf lines) and env, running script (given the socket name) in a
// detached pane of rows × cols. The server is killed in Cleanup.
func startTmux(t *testing.T, dir string, rows, cols int, conf string, env []string, script func(sock string) string) *tmuxServer {
	t.Helper()
	s := &tmuxServer{
		t:    t,
		sock: fmt.Sprintf("vt%d-%d", os.Getpid(), tmuxServers.Add(1)),
		conf: filepath.Join(dir, "tmux.conf"),
		env: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "TMUX_TMPDIR=" + dir,
			"TERM=xterm-256color"}, env...),
	}
	if err := os.WriteFile(s.conf, []byte("set -g status off\nset -g history-limit 10000\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s.run("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), script(s.sock))
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-L", s.sock, "-f", s.conf, "kill-server")
		cmd.Env = s.env
		_ = cmd.Run()
	})
	return s
}

// run runs one tmux command against the server and returns its output.
func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-L", s.sock, "-f", s.conf}, args...)...)
	cmd.Env = s.env
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("tmux %v: %v", args, err)
	}
	return string(out)
}

// settle returns the screen once still reads in a row, every apart,
// found it unchanged: tmux offers no event for "done drawing", so its
// screen is polled, within 10 s.
func (s *tmuxServer) settle(every time.Duration, still int) string {
	s.t.Helper()
	var screen string
	same := 0
	deadline := time.Now().Add(10 * time.Second)
	for prev := ""; same < still; prev = screen {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never settled:\n%s", screen)
		}
		time.Sleep(every)
		screen = s.run("capture-pane", "-p")
		if screen == prev {
			same++
		} else {
			same = 0
		}
	}
	return screen
}

// result is what tmux shows now, with screen as the screen.
func (s *tmuxServer) result(screen string) tmuxResult {
	s.t.Helper()
	var r tmuxResult
	r.screen = strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	var alt int
	if _, err := fmt.Sscanf(s.run("display", "-p", "#{cursor_x} #{cursor_y} #{alternate_on}"), "%d %d %d", &r.cx, &r.cy, &alt); err != nil {
		s.t.Fatal(err)
	}
	r.alt = alt == 1
	for _, l := range strings.Split(strings.TrimSuffix(s.run("capture-pane", "-p", "-J", "-S", "-"), "\n"), "\n") {
		r.transcript = append(r.transcript, strings.TrimRight(l, " "))
	}
	r.transcript = trimEmpty(r.transcript)
	return r
}
