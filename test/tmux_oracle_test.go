//go:build linux

package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"golang.org/x/sys/unix"
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
	// Other tests make this process a child subreaper (it is process-wide
	// and sticky). tmux's server daemonizes, and its panes' programs are
	// orphaned when it dies: under a subreaper they would become this
	// process's unreaped zombies. Off while tmux runs, on again after.
	var was uintptr
	_, _, _ = unix.Syscall6(unix.SYS_PRCTL, unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if was != 0 {
			_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		}
	})
	const rows, cols = 24, 80
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		out, _ := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out)
	}
	t.Cleanup(func() {
		// Wait for the server to be gone before the subreaper comes back:
		// its panes are orphaned when it exits.
		pid := strings.TrimSpace(tmux("display-message", "-p", "#{pid}"))
		tmux("kill-server")
		if pid == "" || strings.ContainsAny(pid, " \n") {
			return
		}
		testkit.WaitFor(t, 10*time.Second, "the tmux server to exit", func() bool {
			_, err := os.Stat("/proc/" + pid)
			return err != nil
		})
	})

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
		pane := openTmuxPane(t, tmux, win)
		seen, ok := pane.waitReady()
		if !ok {
			t.Errorf("%s: never waited for input in tmux after starting: %s", c.name, seen)
			continue
		}
		t.Logf("%s: in tmux, %s", c.name, seen)
		ready := true
		for _, k := range c.keys {
			for _, key := range k {
				tmux("send-keys", "-t", win, key) // tmux knows these names too
			}
			// An answer from tmux after send-keys: tmux has written the
			// keys to the pane by then (see testkit.TmuxPane.Ready).
			tmux("display-message", "-p", "-t", win, "#{pane_pid}")
			seen, ok := pane.waitReady()
			if !ok {
				t.Errorf("%s: never waited for input in tmux after %q: %s", c.name, k, seen)
				ready = false
				break
			}
			t.Logf("%s: in tmux after %q, %s", c.name, k, seen)
		}
		if !ready {
			continue
		}
		// The program waits with every key read, but tmux may not have
		// applied all it wrote: wait for our screen.
		got := strings.Join(ours.Rows, "\n")
		var want string
		if !tmuxPoll(func() bool {
			wantRows := strings.Split(strings.TrimRight(tmux("capture-pane", "-p", "-t", win), "\n"), "\n")
			for len(wantRows) < rows {
				wantRows = append(wantRows, "")
			}
			for i := range wantRows {
				wantRows[i] = strings.TrimRight(wantRows[i], " ")
			}
			want = strings.Join(wantRows, "\n")
			return want == got
		}) {
			t.Errorf("%s: screens differ\n--- ptyactor ---\n%s\n--- tmux ---\n%s", c.name, got, want)
		}
	}
}

// openTmuxPane looks up the pane of window win; tmux runs a tmux command.
func openTmuxPane(t *testing.T, tmux func(args ...string) string, win string) *tmuxPane {
	t.Helper()
	out := tmux("display-message", "-p", "-t", win, "#{pane_pid} #{pane_tty}")
	f := strings.Fields(out)
	if len(f) != 2 {
		t.Fatalf("pane pid and tty: %q", out)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := testkit.OpenTmuxPane(pid, f[1])
	if errors.Is(err, testkit.ErrTmuxPaneUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return &tmuxPane{p}
}

// tmuxPane is a tmux pane whose readiness the test waits on.
type tmuxPane struct{ *testkit.TmuxPane }

// waitReady waits until ready holds, and returns what it saw last.
func (p *tmuxPane) waitReady() (seen string, ok bool) {
	ok = tmuxPoll(func() bool {
		var r bool
		r, seen = p.Ready()
		return r
	})
	return seen, ok
}

// tmuxPollDeadline bounds tmuxPoll. It is a guard against a wait that
// never ends, not a speed bound: the conditions waited for do not hold
// early, so however slow the machine, waiting longer changes no result.
const tmuxPollDeadline = 15 * time.Second

// tmuxPoll polls cond, a few milliseconds apart, until it holds, and
// reports whether it did within tmuxPollDeadline. The caller fails with
// what it saw last.
func tmuxPoll(cond func() bool) bool {
	deadline := time.Now().Add(tmuxPollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
