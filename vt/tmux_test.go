package vt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
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

// settle returns the screen once tmux has applied everything written to
// the pane so far, for a pane whose program writes nothing more and never
// reads its terminal (tmuxRun's sleep). tmux tells no "done reading", so
// a title is written to the pane's terminal behind that output: once tmux
// shows it, tmux has applied all that came before.
func (s *tmuxServer) settle() string {
	s.t.Helper()
	title := fmt.Sprintf("vt-settled-%d", settles.Add(1))
	tty, err := os.OpenFile(strings.TrimSpace(s.run("display", "-p", "#{pane_tty}")), os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	_, err = tty.WriteString("\x1b]2;" + title + "\a")
	if cerr := tty.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.t.Fatal(err)
	}
	var seen string
	if !waitUntil(5*time.Millisecond, func() bool {
		seen = strings.TrimSpace(s.run("display", "-p", "#{pane_title}"))
		return seen == title
	}) {
		s.t.Fatalf("tmux never showed the title %q written behind the output (it shows %q)", title, seen)
	}
	return s.run("capture-pane", "-p")
}

var settles atomic.Int64

// waitDeadline bounds waitUntil. It is a guard against a wait that never
// ends, not a speed bound: the conditions waited for do not hold early, so
// however slow the machine, waiting longer changes no result.
const waitDeadline = 15 * time.Second

// waitUntil polls cond, every apart, until it holds, and reports whether
// it did within waitDeadline. The caller fails with what it saw last.
func waitUntil(every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(waitDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// capture is what tmux shows now, read in one tmux command: the screen,
// the cursor, the alternate-screen flag and the joined transcript.
func (s *tmuxServer) capture() tmuxResult {
	s.t.Helper()
	out := strings.Split(strings.TrimSuffix(s.run("display", "-p", "#{cursor_x} #{cursor_y} #{alternate_on} #{pane_height}",
		";", "capture-pane", "-p", ";", "capture-pane", "-p", "-J", "-S", "-"), "\n"), "\n")
	var r tmuxResult
	var alt, rows int
	if _, err := fmt.Sscanf(out[0], "%d %d %d %d", &r.cx, &r.cy, &alt, &rows); err != nil || len(out) < 1+rows {
		s.t.Fatalf("tmux capture: %v %q", err, out)
	}
	r.alt = alt == 1
	r.screen = out[1 : 1+rows]
	for _, l := range out[1+rows:] {
		r.transcript = append(r.transcript, strings.TrimRight(l, " "))
	}
	r.transcript = trimEmpty(r.transcript)
	return r
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

// pane looks at the server's pane from /proc (testkit.TmuxPane); off Linux, or
// where the probe has no table, the test is skipped.
func (s *tmuxServer) pane() *testkit.TmuxPane {
	s.t.Helper()
	f := strings.Fields(s.run("display", "-p", "#{pane_pid} #{pane_tty}"))
	if len(f) != 2 {
		s.t.Fatalf("pane pid and tty: %q", f)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		s.t.Fatal(err)
	}
	p, err := testkit.OpenTmuxPane(pid, f[1])
	if errors.Is(err, testkit.ErrTmuxPaneUnsupported) {
		s.t.Skip(err)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = p.Close() })
	return p
}
