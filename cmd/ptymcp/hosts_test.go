package main

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/tools"
)

// ptymcp -host serves MCP clients with terminals on a real ptyhost: the
// same tools and results, and the shell is the host's child.
func TestHostTerminals(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ptyhost")
	if out, err := exec.Command("go", "build", "-o", bin, "../ptyhost").CombinedOutput(); err != nil {
		t.Fatalf("go build ptyhost: %v\n%s", err, out)
	}
	host := exec.Command(bin, "-listen", "127.0.0.1:0", "-insecure", "-sandbox", "danger-full-access", "-log-level", "disabled")
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ptyhost listening on "); ok {
				addr <- a
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("ptyhost did not serve")
	}
	c, _, _ := stdioServer(t, "-host", a, "-host-insecure")
	open := c.call(tools.TerminalOpen, obj{})
	id, pid := open.S["sessionId"].(string), int(open.S["pid"].(float64))
	if st, err := linux.ReadStat(linux.FS{}, pid); err != nil || st.PPID != host.Process.Pid {
		t.Fatalf("shell %d: %+v %v, want the host's (%d) child", pid, st, err, host.Process.Pid)
	}
	r := c.call(tools.TerminalSend, obj{"sessionId": id, "text": "python3 -q"})
	if r.S["reader"] != "python3" || r.S["cause"] != "input" {
		t.Fatalf("python3 on the host: %+v", r.S)
	}
	r = c.call(tools.TerminalSend, obj{"sessionId": id, "text": "exit()"})
	if r.S["exitCode"] != float64(0) {
		t.Fatalf("exit(): %+v", r.S)
	}
	r = c.call(tools.TerminalClose, obj{"sessionId": id})
	if r.S["outcome"] != "closed" {
		t.Fatalf("close: %+v", r.S)
	}
}

// Host flags are checked before anything starts.
func TestHostFlagChecks(t *testing.T) {
	for _, args := range [][]string{
		{"-host", "127.0.0.1:7400"},                                     // no TLS, not insecure
		{"-host", "10.1.2.3:7400", "-host-insecure"},                    // insecure off loopback
		{"-host", "nope"},                                               // not host:port
		{"-host", "127.0.0.1:1", "-host-insecure", "-host-tls-ca", "x"}, // both
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
