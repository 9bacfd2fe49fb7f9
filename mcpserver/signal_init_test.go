//go:build linux

package mcpserver

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// terminal_signal over MCP, in the default (read-only) bubblewrap
// sandbox: the shell exec's sleep, which is then pid 1 of the sandbox's
// pid namespace and has no handler for SIGTERM. The tool answers "not
// delivered" with the reason, in text and value, and the sleep runs on
// until terminal_close.
func TestSignalDroppedBySandboxInit(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatalf("bwrap is not installed: apt-get install bubblewrap")
	}
	root := t.TempDir()
	pol, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	p := newInprocWith(t, tools.Options{}, local.Options{Policy: pol, Sandbox: sandbox.NewBubblewrap(sandbox.BubblewrapOptions{}), Env: map[string]string{"HOME": root}})
	c := p.client()
	r := c.ok(tools.TerminalOpen, obj{})
	id, pid := r.str("sessionId"), int(r.num("pid"))
	if pid <= 0 {
		t.Fatalf("open: %v, want the shell's pid", r.S)
	}
	comm := func() string {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return strings.TrimSpace(string(b))
	}
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "exec sleep 60", "runInBackground": true})
	testkit.WaitFor(t, 10*time.Second, "the shell's process to exec sleep", func() bool { return comm() == "sleep" })

	r = c.ok(tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGTERM"})
	prefix := "SIGTERM not delivered to foreground process group " + strconv.Itoa(pid) + ": sleep (pid " + strconv.Itoa(pid) + ") runs in the shell's process, pid 1 of the sandbox's pid namespace, and has no handler for SIGTERM"
	if r.S["delivered"] != false || r.num("targetPgid") != float64(pid) || !strings.HasPrefix(r.Text, prefix) || !strings.Contains(r.str("reason"), "pid 1 of the sandbox's pid namespace") {
		t.Fatalf("signal: %q %v, want not delivered, with the reason", r.Text, r.S)
	}
	if comm() != "sleep" {
		t.Fatalf("after SIGTERM the shell's process runs %q, want the sleep", comm())
	}
	r = c.ok(tools.TerminalClose, obj{"sessionId": id})
	if r.str("outcome") != "closed" {
		t.Fatalf("close: %q %v", r.Text, r.S)
	}
	testkit.WaitFor(t, 10*time.Second, "the sleep to be gone", func() bool { return comm() == "" })
}
