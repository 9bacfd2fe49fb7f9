//go:build linux

package local

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
)

// A forked child that keeps its parent's program and handlers is waited
// for until it execs, however long it takes to get there (a loaded machine
// can keep a fresh child from running for tens of milliseconds): a signal
// before the exec would reach the parent's handlers, not the command.
// Here the parent is a python that forks; its child sleeps 150 ms (three
// times the bound that proved too short) before it execs sleep.
func TestAwaitExecWaitsForTheChildsExec(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required (test/run.sh installs it)")
	}
	script := `
import os, signal, sys, time
signal.signal(signal.SIGUSR1, lambda *a: None)
pid = os.fork()
if pid == 0:
    time.sleep(0.15)
    os.execvp("sleep", ["sleep", "30"])
print(pid, flush=True)
os.waitpid(pid, 0)
`
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
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("child pid %q: %v", buf[:n], err)
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
	s := &session{shell: st.Identity()}
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
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required (test/run.sh installs it)")
	}
	script := `
import os, signal, sys, time
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGUSR1, lambda *a: None)
    print("ready", flush=True)
    time.sleep(30)
    os._exit(0)
print(pid, flush=True)
os.waitpid(pid, 0)
`
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
	var lines []string
	buf := make([]byte, 64)
	for len(lines) < 2 {
		n, err := out.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Fields(string(buf[:n]))...)
	}
	var child int
	for _, l := range lines {
		if v, err := strconv.Atoi(l); err == nil {
			child = v
		}
	}
	if child == 0 {
		t.Fatalf("no child pid in %q", lines)
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
	s := &session{shell: st.Identity()}
	start := time.Now()
	s.awaitExec(child)
	if waited := time.Since(start); waited >= execWait {
		t.Fatalf("awaitExec waited its whole bound (%v) for a child with its own handlers", waited)
	}
}
