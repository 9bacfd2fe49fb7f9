package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// startPtyhost runs a loopback ptyhost without logs; see
// testkit.StartHost.
func startPtyhost(t *testing.T, args ...string) *testkit.Host {
	t.Helper()
	return testkit.StartHost(t, testkit.Loopback(append([]string{"-log-level", "disabled"}, args...)...)...)
}

// ptymcp -resume-file: the end of the stdio connection detaches the
// owner; the next ptymcp with the same file gets its terminals back, with
// the same ids and state.
func TestResumeFileKeepsTerminals(t *testing.T) {
	addr := startPtyhost(t, "-client-grace", "1m").Addr()
	file := filepath.Join(t.TempDir(), "resume.json")
	args := []string{"-host", addr, "-host-insecure", "-resume-file", file}

	c, cmd, _ := stdioServer(t, args...)
	open := c.call(tools.TerminalOpen, obj{})
	id := open.str("sessionId")
	pid := int(open.num("pid"))
	c.call(tools.TerminalSend, obj{"sessionId": id, "text": "X=kept42"})
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("resume file: %v %v, want mode 0600", fi, err)
	}
	_ = c.cs.Close() // EOF on ptymcp's stdin: it detaches and exits
	if cmd.ProcessState == nil {
		t.Fatal("ptymcp still runs after its client closed")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the shell %d did not outlive ptymcp: %v", pid, err)
	}

	// The next one resumes it; SIGTERM (an MCP client restarting its
	// server) detaches it again.
	c, cmd, _ = stdioServer(t, args...)
	if got := sessionPID(t, c, id); got != pid {
		t.Fatalf("resumed %s has pid %d, want %d", id, got, pid)
	}
	c.call(tools.TerminalSend, obj{"sessionId": id, "text": "X=${X}again"})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = c.cs.Close()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the shell %d did not outlive ptymcp's SIGTERM: %v", pid, err)
	}

	c, _, _ = stdioServer(t, args...)
	if r := c.call(tools.TerminalSend, obj{"sessionId": id, "text": "echo $X"}); !strings.Contains(r.Text, "kept42again") {
		t.Fatalf("state after resume: %q", r.Text)
	}
	if r := c.call(tools.TerminalClose, obj{"sessionId": id}); r.S["outcome"] != "closed" {
		t.Fatalf("close: %+v", r.S)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("shell %d survived its close: %v", pid, err)
	}
}

// The resume file holds credentials: one others may read is refused, and
// it needs -host.
func TestResumeFileChecks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "resume.json")
	if err := os.WriteFile(file, []byte(`{"hosts":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readResumeFile(file); err == nil {
		t.Fatal("a world-readable resume file was accepted")
	}
	st := resumeState{Hosts: map[string]string{"127.0.0.1:1": "t"}}
	if err := writeResumeFile(file, st); err != nil {
		t.Fatal(err)
	}
	got, err := readResumeFile(file)
	if err != nil || got.Hosts["127.0.0.1:1"] != "t" {
		t.Fatalf("round trip: %+v %v", got, err)
	}
}

// ptymcp killed (SIGKILL) while a terminal_send waits on its command; the
// next ptymcp with the same resume file takes the terminal back, and
// terminal_wait follows the send the killed one left in flight: a wait
// that ends first says timeout (not that a send is active), and the next
// returns the send's output and its exit code once it settles.
func TestResumedWaitFollowsTheSendInFlight(t *testing.T) {
	addr := startPtyhost(t, "-client-grace", "1m").Addr()
	file := filepath.Join(t.TempDir(), "resume.json")
	args := []string{"-host", addr, "-host-insecure", "-resume-file", file}
	gate := newGate(t)

	c, cmd, _ := stdioServer(t, args...)
	id := c.open(obj{})
	sent := make(chan error, 1)
	go func() {
		_, err := c.callErr(tools.TerminalSend, obj{"sessionId": id, "text": "echo begun-marker; read _ < " + gate + "; echo done-marker; false"})
		sent <- err
	}()
	// The command holds the gate open for reading: the send is in flight.
	var w *os.File
	testkit.WaitFor(t, 20*time.Second, "the command to wait on the gate", func() bool {
		var err error
		w, err = os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil && !errors.Is(err, syscall.ENXIO) {
			t.Fatalf("open the gate: %v", err)
		}
		return err == nil
	})
	defer w.Close()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cs.Close()
	if err := <-sent; err == nil {
		t.Fatal("the send returned although its server was killed")
	}

	c, _, _ = stdioServer(t, args...)
	if r := c.call(tools.TerminalWait, obj{"sessionId": id, "timeoutMs": 200}); r.IsError || r.str("waitReason") != "timeout" {
		t.Fatalf("a wait shorter than the send: %q", r.Text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	waited := callAsync(ctx, c, tools.TerminalWait, obj{"sessionId": id, "timeoutMs": 60000})
	if _, err := w.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	r := <-waited
	if r.IsError || !strings.Contains(r.Text, "begun-marker") || !strings.Contains(r.Text, "done-marker") || r.S["exitCode"] != 1.0 {
		t.Fatalf("the wait on the adopted send: %q %v", r.Text, r.S)
	}
	// The send's result is handed out once: the next wait waits anew.
	if r := c.call(tools.TerminalWait, obj{"sessionId": id, "timeoutMs": 2000}); r.IsError || strings.Contains(r.Text, "done-marker") {
		t.Fatalf("the wait after it: %q", r.Text)
	}
}
