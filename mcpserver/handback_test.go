package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// halfTypedCases are lines a person leaves unsubmitted in the live view:
// keys typed into xterm.js (each its own message on the socket), then
// Hand back. mark is text of the line that must not reach the agent's
// command line or the screen after it; halfTyped is what the hand-back
// names.
var halfTypedCases = []struct {
	name, keys, mark, halfTyped string
	echoed                      bool // the line editor shows the keys
}{
	{"plain", "echo half-typed-X", "half-typed", "echo half-typed-X", true},
	{"pending escape", "echo esc-X\x1b", "esc-X", `echo esc-X\x1b`, true},
	{"half an arrow key", "echo arrow-X\x1b[", "arrow-X", `echo arrow-X\x1b[`, true},
	{"erased to nothing", "echo gone-X" + strings.Repeat("\b", 11), "gone-X", "", false},
	{"multi-byte", "echo é日本-X", "日本", "echo é日本-X", true},
	{"unfinished bracketed paste", "\x1b[200~echo pasted-X", "pasted-X", `\x1b[200~echo pasted-X`, false},
}

// A person's half-typed line never glues to the agent's next command: in
// the console's live view the operator takes control (the page then
// sizes the terminal: readline redraws its line, without the shell's
// marker), types a line without Enter, and hands back; the agent's next
// terminal_send runs exactly its command, its result names the line, and
// the page's screen shows the agent's command alone. One case per way a
// line editor can be left: plain text, an ESC or half an arrow key
// pending, erased back to nothing, multi-byte characters, a bracketed
// paste left open. (issue 35: the line ran as "echo half-typed-Xecho
// agent-Y".)
func TestHandBackHalfTypedInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t)
	handBackHalfTyped(t, b, c, consoleURL, func(id string, pid int) {})
}

// The same on a remote session: ptymcp -host, the keys crossing the host
// link into the host's shell.
func TestHandBackHalfTypedRemoteInBrowser(t *testing.T) {
	host := startPtyhost(t, "-idle-silence-ms", "30000")
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t, "-host", host.Addr(), "-host-insecure")
	handBackHalfTyped(t, b, c, consoleURL, func(id string, pid int) {
		if !descendsFrom(pid, host.Pid()) {
			t.Fatalf("the terminal's shell %d is not the ptyhost's (%d): not a remote session", pid, host.Pid())
		}
	})
}

func handBackHalfTyped(t *testing.T, b *testkit.Browser, c *client, consoleURL string, check func(id string, pid int)) {
	for _, tc := range halfTypedCases {
		t.Run(tc.name, func(t *testing.T) {
			open := c.ok(tools.TerminalOpen, nil)
			id := open.str("sessionId")
			check(id, int(open.num("pid")))
			liveView(t, b, consoleURL, id)
			b.Eval(`document.getElementById("take").click()`, nil)
			b.WaitJS(`ptyView.control.you && !ptyView.term.options.disableStdin`, 10*time.Second)
			// The holder's page sizes the session to its window (a
			// SIGWINCH each time: readline redraws its line, without the
			// shell's marker) as a person's does: typed once the page
			// has the size it asked for.
			b.WaitJS(fitted, 10*time.Second)
			typeKeys(t, b, tc.keys, 0)
			if tc.echoed {
				b.WaitJS(bufferText+`.split("\n").some((l) => l.startsWith("$ ") && l.includes(`+jsString(tc.mark)+`))`, 15*time.Second)
			}
			b.Eval(`document.getElementById("handback").click()`, nil)
			b.WaitJS(`ptyView.control.holder === "agent" && !ptyView.control.you`, 10*time.Second)

			r := c.send(id, "echo agent-$((6*7))")
			// The viewport starts where the send began: on the prompt's
			// line, with or without the prompt.
			view := r.str("viewport")
			lines := strings.Split(view, "\n")
			if !slices.Contains(lines, "$ echo agent-$((6*7))") && !slices.Contains(lines, "echo agent-$((6*7))") ||
				!slices.Contains(lines, "agent-42") || strings.Contains(view, tc.mark) || r.num("exitCode") != 0 {
				t.Fatalf("the agent's command did not run as sent:\n%s", r.Text)
			}
			hb, _ := r.S["handback"].(map[string]any)
			if hb == nil || hb["reason"] != "returned" || fmt.Sprint(hb["lines"]) != "[]" {
				t.Fatalf("hand-back %v\n%s", hb, r.Text)
			}
			if got, _ := hb["halfTyped"].(string); got != tc.halfTyped {
				t.Fatalf("hand-back names the line %q, want %q\n%s", got, tc.halfTyped, r.Text)
			}
			if tc.halfTyped != "" && !strings.Contains(r.Text, "half-typed line") {
				t.Fatalf("the result's text does not name the half-typed line:\n%s", r.Text)
			}
			// The page shows the agent's command alone on its line, and
			// nothing of the person's.
			b.WaitJS(bufferText+`.includes("\nagent-42\n")`, 15*time.Second)
			var screen string
			b.Eval(bufferText, &screen)
			if !slices.Contains(strings.Split(screen, "\n"), "$ echo agent-$((6*7))") || strings.Contains(screen, tc.mark) {
				t.Fatalf("the page's screen:\n%s", screen)
			}
			// The next send has nothing left to discard.
			if r := c.send(id, "echo next"); r.str("foreignInput") != "" || r.S["handback"] != nil {
				t.Fatalf("a second send after the hand-back: %s", r.Text)
			}
			c.ok(tools.TerminalClose, obj{"sessionId": id})
		})
	}
}

// fitted is true once the page's terminal has the size the page asks for
// while it holds the input (view.js fit: the stage in cells of the
// holder's 14px font), which it takes from the session's resize event:
// the session was resized.
const fitted = `(() => { const cell = ptyView.cellAt(14), stage = document.getElementById("stage"), term = ptyView.term;
  if (!cell.width || document.getElementById("banner").hidden) return false;
  const cols = Math.min(1000, Math.max(20, Math.floor(stage.clientWidth / cell.width)));
  const rows = Math.min(500, Math.max(5, Math.floor(stage.clientHeight / cell.height)));
  return term.cols > 80 && cols === term.cols && rows === term.rows; })()`

// jsString quotes s for a JavaScript expression.
func jsString(s string) string { return fmt.Sprintf("%q", s) }
