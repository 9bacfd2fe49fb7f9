package mcpserver

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// Taking over a terminal that lives on a ptyhost, in the browser, through
// `ptymcp -host` and its console: the operator takes control during the
// agent's long send, which settles at once (taken_over), the command left
// running on the host; the agent's sends are refused (CONTROL_HELD) while
// the operator holds it; keys typed into the page cross the host link and
// run in the host's shell; Hand back lets the agent send again, and its
// first result lists what the person typed.
func TestTakeOverRemoteInBrowser(t *testing.T) {
	host := startPtyhost(t, "-idle-silence-ms", "30000")
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t, "-host", host.Addr(), "-host-insecure")
	open := c.ok(tools.TerminalOpen, nil)
	id := open.str("sessionId")
	if pid := int(open.num("pid")); !descendsFrom(pid, host.Pid()) {
		t.Fatalf("the terminal's shell %d is not the ptyhost's (%d): not a remote session", pid, host.Pid())
	}
	liveView(t, b, consoleURL, id)

	takeInFlight(t, b, c, id, `document.getElementById("take").click()`,
		`ptyView.control.you && ptyView.control.holder === "operator" && !document.getElementById("banner").hidden &&
		!document.getElementById("handback").hidden && !ptyView.term.options.disableStdin`)
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "echo refused-$((6*7))"}, "CONTROL_HELD")
	stillRunning(t, b)

	// The person stops the sleep and types a command: it runs on the host.
	typeKeys(t, b, "c", chromedp.ModifierCtrl)
	b.WaitJS(`ptyView.badge === "prompt"`, 15*time.Second)
	typeKeys(t, b, "echo remote-$((6*7))\r", 0)
	b.WaitJS(bufferText+`.includes("remote-42")`, 15*time.Second)

	r := handBack(t, b, c, id, "echo remote-$((6*7))")
	b.WaitJS(bufferText+`.includes("agent-42")`, 15*time.Second)
	var screen string
	b.Eval(bufferText, &screen)
	if strings.Contains(screen, "refused-") || strings.Contains(r.Text, "refused-") {
		t.Fatalf("the agent's send refused while the operator held the input was written:\n%s", screen)
	}
	withinPolicy(t, b)
}

// descendsFrom reports whether process pid is a descendant of process
// ancestor, following the parents /proc gives.
func descendsFrom(pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// The parent is the second field after the command's ")".
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
		if pid == ancestor {
			return true
		}
	}
	return false
}
