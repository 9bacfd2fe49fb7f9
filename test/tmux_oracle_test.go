//go:build linux

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// pickerScript is an arrow-key picker drawn with curses.
const pickerScript = `
import curses
def main(s):
    items = ["apple", "banana", "cherry", "damson"]
    i = 0
    while True:
        s.erase()
        s.addstr(0, 0, "pick a fruit:")
        for n, it in enumerate(items):
            s.addstr(n + 2, 2, ("> " if n == i else "  ") + it)
        s.refresh()
        k = s.getch()
        if k == curses.KEY_DOWN: i = min(i + 1, len(items) - 1)
        elif k == curses.KEY_UP: i = max(i - 1, 0)
        elif k in (10, 13): return items[i]
print("picked", curses.wrapper(main))
`

// The same program at the same size, after the same input, shows the same
// screen in a ptyactor session as in tmux (capture-pane): vim, less, a
// curses picker driven by arrow keys, man through a pager, and git add -p.
func TestScreensMatchTmux(t *testing.T) {
	requireProgram(t, "tmux", "tmux")
	requireProgram(t, "vim", "vim")
	requireProgram(t, "less", "less")
	requireProgram(t, "git", "git")
	requireProgram(t, "man", "man-db")
	dir := t.TempDir()
	files := map[string]string{
		"notes.txt": strings.Repeat("a line of notes\n", 5) + "the end\n",
		"pages.txt": func() string {
			var b strings.Builder
			for i := range 100 {
				b.WriteString("page line ")
				b.WriteString(strings.Repeat("=", i%30))
				b.WriteString("\n")
			}
			return b.String()
		}(),
		"picker.py": pickerScript,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo := filepath.Join(dir, "repo")
	for _, c := range [][]string{
		{"git", "init", "-q", repo},
		{"sh", "-c", "cd " + repo + " && printf 'one\\ntwo\\nthree\\n' > f.txt && git add f.txt && git -c user.name=t -c user.email=t@t commit -qm init && printf 'one\\n2\\nthree\\n' > f.txt"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", c, err, out)
		}
	}
	const rows, cols = 24, 80
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		out, _ := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out)
	}
	t.Cleanup(func() { tmux("kill-server") })

	h := newHarness(t, testkit.PTYConfig(), local.Options{Env: map[string]string{"LESS": "", "LESSOPEN": "", "GIT_PAGER": "cat"}})
	ctx := testkit.Ctx(t)
	cases := []struct {
		name, cmd string
		keys      [][]string // each a send of named keys, after the command
		cwd       string
	}{
		{"vim", "vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10' notes.txt", [][]string{{"j", "j", "d", "d"}}, dir},
		{"less", "less pages.txt", [][]string{{"Space"}, {"j", "j"}}, dir},
		{"picker", "python3 picker.py", [][]string{{"Down"}, {"Down"}, {"Up"}}, dir},
		{"man", "MANPAGER=less man ls", [][]string{{"j", "j", "j"}}, dir},
		{"git add -p", "clear; git add -p", nil, repo}, // clear: the typed command line is not part of git's screen
	}
	for _, c := range cases {
		if c.name == "man" && exec.Command("man", "-w", "ls").Run() != nil {
			t.Log("man: no manual page for ls on this machine (a minimal image drops them); case skipped")
			continue
		}
		sh := h.spawn(messages.SpawnRequest{Cwd: c.cwd})
		if err := sh.Resize(ctx, rows, cols); err != nil {
			t.Fatal(err)
		}
		// The shell prints its prompt after the resize; the programs below
		// draw their whole screen, so the prompt line does not matter.
		if _, err := sh.Send(ctx, messages.SendRequest{Text: c.cmd, Submit: true, Screen: true}); err != nil {
			t.Fatal(err)
		}
		for _, k := range c.keys {
			if _, err := sh.Send(ctx, messages.SendRequest{Keys: k}); err != nil {
				t.Fatal(err)
			}
		}
		ours, err := sh.Screen(ctx)
		if err != nil {
			t.Fatal(err)
		}

		win := strings.ReplaceAll(c.name, " ", "-")
		tmux("new-session", "-d", "-s", win, "-x", "80", "-y", "24", "-c", c.cwd,
			"env", "TERM=xterm-256color", "LESS=", "LESSOPEN=", "GIT_PAGER=cat", "PAGER=cat", "MANPAGER=cat", "bash", "--norc", "--noprofile", "-c", c.cmd+"; sleep 60")
		settle := func() string {
			// tmux has no readiness: wait until its screen stops changing.
			prev, same := "", 0
			deadline := time.Now().Add(10 * time.Second)
			for same < 20 && time.Now().Before(deadline) {
				cur := tmux("capture-pane", "-p", "-t", win)
				if cur == prev {
					same++
				} else {
					same = 0
				}
				prev = cur
				time.Sleep(10 * time.Millisecond) // tmux's side only: it cannot say when it is ready
			}
			return prev
		}
		settle()
		for _, k := range c.keys {
			for _, key := range k {
				tmux("send-keys", "-t", win, key) // tmux knows these names too
			}
			settle()
		}
		want := settle()
		got := strings.Join(ours.Rows, "\n")
		wantRows := strings.Split(strings.TrimRight(want, "\n"), "\n")
		for len(wantRows) < rows {
			wantRows = append(wantRows, "")
		}
		for i := range wantRows {
			wantRows[i] = strings.TrimRight(wantRows[i], " ")
		}
		if got != strings.Join(wantRows, "\n") {
			t.Errorf("%s: screens differ\n--- ptyactor ---\n%s\n--- tmux ---\n%s", c.name, got, strings.Join(wantRows, "\n"))
		}
	}
}
