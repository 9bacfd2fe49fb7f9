package main

import (
	"io"
	"testing"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/tools"
)

// ptymcp -host serves MCP clients with terminals on a real ptyhost: the
// same tools and results, and the shell is the host's child.
func TestHostTerminals(t *testing.T) {
	// python3's start may outlast the host's default silence tier (3 s) on
	// a loaded machine; only the exact tier may settle it here.
	host := startPtyhost(t, "-idle-silence-ms", "30000")
	c, _, _ := stdioServer(t, "-host", host.Addr(), "-host-insecure")
	open := c.call(tools.TerminalOpen, obj{})
	id, pid := open.S["sessionId"].(string), int(open.S["pid"].(float64))
	if st, err := linux.ReadStat(linux.FS{}, pid); err != nil || st.PPID != host.Pid() {
		t.Fatalf("shell %d: %+v %v, want the host's (%d) child", pid, st, err, host.Pid())
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
