package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/tools"
)

// Over MCP an agent opens vim, types, saves and quits: the results frame
// vim's screen, keys go by name, terminal_screen and terminal_resize show
// the screen on demand.
func TestMCPVim(t *testing.T) {
	if _, err := os.Stat("/usr/bin/vim"); err != nil {
		t.Fatal("vim is not installed (test/run.sh installs it)")
	}
	p := newInproc(t, tools.Options{})
	c := p.client()
	dir := t.TempDir()
	id := c.call(tools.TerminalOpen, obj{"cwd": dir}).S["sessionId"].(string)
	r := c.call(tools.TerminalSend, obj{"sessionId": id, "text": "vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10' todo.txt"})
	if sc, ok := r.S["screen"].(map[string]any); !ok || sc["altScreen"] != true || !strings.Contains(r.Text, "┌── full-screen program 40x160") {
		t.Fatalf("vim: %s\n%+v", r.Text, r.S)
	}
	c.call(tools.TerminalSend, obj{"sessionId": id, "text": "ibuy milk", "submit": false})
	r = c.call(tools.TerminalSend, obj{"sessionId": id, "text": "", "submit": false, "keys": []string{"Escape"}})
	if !strings.Contains(r.Text, "│buy milk\n") {
		t.Fatalf("after Escape: %s", r.Text)
	}
	r = c.call(tools.TerminalResize, obj{"sessionId": id, "rows": 20, "cols": 80})
	if sc := r.S["screen"].(map[string]any); sc["height"] != float64(20) || sc["width"] != float64(80) {
		t.Fatalf("resize: %+v", r.S)
	}
	r = c.call(tools.TerminalScreen, obj{"sessionId": id})
	if !strings.Contains(r.Text, "│buy milk\n") || !strings.Contains(r.Text, "20x80") {
		t.Fatalf("screen: %s", r.Text)
	}
	r = c.call(tools.TerminalSend, obj{"sessionId": id, "text": ":wq"})
	if r.S["exitCode"] != float64(0) || r.S["screen"] != nil {
		t.Fatalf(":wq: %s %+v", r.Text, r.S)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "todo.txt")); err != nil || string(b) != "buy milk\n" {
		t.Fatalf("todo.txt %q %v", b, err)
	}
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "x", "keys": []string{"Hyperspace"}}, "unknown key")
}
