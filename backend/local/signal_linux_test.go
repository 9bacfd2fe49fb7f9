//go:build linux

package local

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
)

// forkingParent starts a python that installs a handler, forks and runs
// childCode (python, one statement per line) in the child, which inherits
// the parent's program and handlers. It returns a session whose "shell" is
// that parent, and the child's pid once the child has printed "ready" (or
// at once, when childCode prints nothing). Both write their line with one
// os.write: print may split a line into several writes, and the two
// processes share the pipe.
func forkingParent(t *testing.T, childCode string, waitReady bool) (*session, int) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required (test/run.sh installs it)")
	}
	var body strings.Builder
	for line := range strings.Lines(strings.TrimSpace(childCode)) {
		body.WriteString("    " + strings.TrimSpace(line) + "\n")
	}
	script := "import os, signal, time\n" +
		"signal.signal(signal.SIGUSR1, lambda *a: None)\n" +
		"pid = os.fork()\n" +
		"if pid == 0:\n" + body.String() + "    os._exit(0)\n" +
		"os.write(1, b'pid %d\\n' % pid)\n" +
		"os.waitpid(pid, 0)\n"
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(os.Environ(), runVar+"="+runID)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	child, ready := 0, !waitReady
	var seen []string
	for sc := bufio.NewScanner(out); (child == 0 || !ready) && sc.Scan(); {
		seen = append(seen, sc.Text()) // for the failure message
		if v, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			if child, err = strconv.Atoi(v); err != nil {
				t.Fatalf("child pid %q: %v", v, err)
			}
		}
		ready = ready || sc.Text() == "ready"
	}
	if child == 0 || !ready {
		t.Fatalf("python ended early: child %d, ready %v, lines %q", child, ready, seen)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			_ = p.Kill()
		}
	})
	st, err := linux.ReadStat(linux.FS{}, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return &session{shell: st.Identity()}, child
}

// A forked child that keeps its parent's program and handlers is waited
// for until it execs, however long it takes to get there (a loaded machine
// can keep a fresh child from running for tens of milliseconds): a signal
// before the exec would reach the parent's handlers, not the command.
// Here the child sleeps 150 ms (three times the bound that proved too
// short) before it execs sleep.
func TestAwaitExecWaitsForTheChildsExec(t *testing.T) {
	s, child := forkingParent(t, `
		time.sleep(0.15)
		os.execvp("sleep", ["sleep", "30"])`, false)
	start := time.Now()
	s.awaitExec(child)
	exe, err := os.Readlink("/proc/" + strconv.Itoa(child) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(exe, "/sleep") {
		t.Fatalf("awaitExec returned after %v with the child still running %s, before its exec", time.Since(start), exe)
	}
}

// A child that installed handlers of its own (a subshell, a script) is
// not waited for: the signal reaches its own handlers.
func TestAwaitExecSkipsAChildWithItsOwnHandlers(t *testing.T) {
	s, child := forkingParent(t, `
		signal.signal(signal.SIGUSR2, lambda *a: None)
		os.write(1, b"ready\n")
		time.sleep(30)`, true)
	start := time.Now()
	s.awaitExec(child)
	if waited := time.Since(start); waited >= execWait {
		t.Fatalf("awaitExec waited its whole bound (%v) for a child with its own handlers", waited)
	}
}
