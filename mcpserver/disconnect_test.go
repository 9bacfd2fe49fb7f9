package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// A clean disconnect (the MCP client of a ptymcp -host closes its stdin,
// ptymcp disposes its owner and exits) is logged as news, not as a fault:
// no error-level line on either side, and the host's endpoint says the
// connection closed cleanly.
func TestCleanDisconnectLogsNoError(t *testing.T) {
	host := testkit.StartHost(t, testkit.Loopback("-log-level", "debug", "-client-loss", "1s")...)
	c, cmd, stderr := stdioServer(t, "-host", host.Addr(), "-host-insecure")
	id := c.open(nil)
	if r := c.send(id, "echo on-the-host"); !strings.Contains(r.Text, "on-the-host") {
		t.Fatalf("send: %s", r.Text)
	}
	if err := c.cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("ptymcp after its client closed: %v\n%s", cmd.ProcessState, stderr)
	}
	testkit.WaitFor(t, 20*time.Second, "the host to see the client go", func() bool {
		s := host.Stderr()
		return strings.Contains(s, `"message":"client lost"`) && strings.Contains(s, "remote connection closed cleanly")
	})
	for side, log := range map[string]string{"ptymcp": stderr.String(), "ptyhost": host.Stderr()} {
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, `"level":"error"`) {
				t.Errorf("%s logged an error on a clean disconnect: %s", side, l)
			}
		}
	}
}
