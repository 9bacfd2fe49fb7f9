//go:build linux || darwin

package teardown

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// watchdog bounds every wait of a test (testkit.WaitFor, a read), so a
// broken teardown fails instead of hanging the suite; calls run under
// testkit.Ctx.
const watchdog = 10 * time.Second

// testGrace keeps the real-process tests fast; the TERM phase of a tree with
// TERM-ignoring members lasts exactly this long.
const testGrace = 300 * time.Millisecond

type started struct {
	cmd *exec.Cmd
	id  linux.Identity
	out *bufio.Reader
}

// startProcess starts cmd in its own session with stdin and stdout piped
// (stdin keeps a `read` blocked; stdout carries "name pid" lines), tracks it,
// and kills and reaps it when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, what string, env ...string) *started {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(append(os.Environ(), "HELPER_BIN="+exe), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stderr = os.Stderr
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if f, ok := stdout.(*os.File); ok {
		_ = f.SetReadDeadline(time.Now().Add(watchdog))
	}
	s := &started{cmd: cmd, id: identity(t, cmd.Process.Pid), out: bufio.NewReader(stdout)}
	track(s.id, what)
	t.Cleanup(func() { s.stop(t) })
	return s
}

// startRoot runs script as a session's shell.
func startRoot(t *testing.T, script string, env ...string) *started {
	t.Helper()
	return startProcess(t, exec.Command("bash", "-c", script), "root", env...)
}

// stop kills and reaps the process; calling it twice is harmless.
func (s *started) stop(t *testing.T) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// readPids reads "name pid" lines until every name has been seen.
func (s *started) readPids(t *testing.T, names ...string) map[string]int {
	t.Helper()
	pids := make(map[string]int)
	for len(pids) < len(names) {
		line, err := s.out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading pids (have %v): %v", pids, err)
		}
		name, pidStr, ok := strings.Cut(strings.TrimSpace(line), " ")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil {
			t.Fatalf("bad line %q", line)
		}
		pids[name] = pid
	}
	return pids
}

func identity(t *testing.T, pid int) linux.Identity {
	t.Helper()
	s, err := hostTable().stat(pid)
	if err != nil {
		t.Fatalf("stat %d: %v", pid, err)
	}
	return s.Identity()
}

// quiet reports whether id is gone, reused or a zombie.
func quiet(id linux.Identity) bool {
	s, err := hostTable().stat(id.PID)
	if errors.Is(err, linux.ErrNotFound) {
		return true
	}
	return err == nil && (s.StartTime != id.StartTime || !s.Alive())
}

func realOpts(t *testing.T) Options {
	return Options{Grace: testGrace, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)}
}

func stat(t *testing.T, pid int) linux.Stat {
	t.Helper()
	s, err := hostTable().stat(pid)
	if err != nil {
		t.Fatalf("stat %d: %v", pid, err)
	}
	return s
}

func marker(t *testing.T) string { return filepath.Join(t.TempDir(), "marker") }
