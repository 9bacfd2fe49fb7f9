//go:build linux

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
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
			// keys to the pane by then (see tmuxPane.ready).
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

// tmuxPane tells, from /proc, whether the program in a tmux pane waits
// for input with every key it was sent read: the runtime's own probe
// (linux.ProbeGroup, as backend/local uses it) on the pane's process tree
// and its terminal's foreground group.
type tmuxPane struct {
	pid   int // #{pane_pid}, the pane's session leader
	term  linux.Terminal
	slave int // the pane's pts, opened to poll for unread input; never read
}

// openTmuxPane looks up the pane of window win; tmux runs a tmux command.
func openTmuxPane(t *testing.T, tmux func(args ...string) string, win string) *tmuxPane {
	t.Helper()
	if tmuxHostArch == linux.ArchUnsupported {
		t.Skipf("the /proc probe does not support %s", runtime.GOARCH)
	}
	out := tmux("display-message", "-p", "-t", win, "#{pane_pid} #{pane_tty}")
	f := strings.Fields(out)
	if len(f) != 2 {
		t.Fatalf("pane pid and tty: %q", out)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	dev, err := linux.TerminalDevice(f[1])
	if err != nil {
		t.Fatal(err)
	}
	slave, err := unix.Open(f[1], unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(slave) })
	return &tmuxPane{pid: pid, term: linux.Terminal{Paths: []string{f[1], "/dev/tty"}, Device: dev}, slave: slave}
}

var tmuxHostArch = linux.ArchFor(runtime.GOARCH)

// tmuxShortWait is the longest own timeout of a wait that does not count as
// waiting for input: vim, after an Escape, waits in such slices for the
// rest of a possible key code and redraws only after them (actors/send.go
// looks past the same waits).
const tmuxShortWait = time.Second

// ready reports whether the terminal's input queue is empty (every key
// read) and a thread of the foreground group is blocked reading the
// terminal in a wait that has no timeout or one longer than a second (a
// shorter one ends by itself, and the program may draw then); seen says
// what was found.
//
// The caller must have had an answer from tmux since it sent keys: tmux
// writes them to the pane on a later turn of its event loop than the
// send-keys command, and before it serves another client.
func (p *tmuxPane) ready() (ok bool, seen string) {
	// poll, unlike TIOCINQ, first pushes what the master wrote into the
	// line discipline (see backend/local's inputConsumed).
	fds := []unix.PollFd{{Fd: int32(p.slave), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		return false, fmt.Sprintf("poll of the pane's terminal: %v", err)
	}
	if n > 0 {
		return false, "input not read yet"
	}
	st, err := linux.ReadStat(linux.FS{}, p.pid)
	if err != nil {
		return false, err.Error()
	}
	if st.TPGID <= 0 {
		return false, fmt.Sprintf("no foreground group (tpgid %d)", st.TPGID)
	}
	g, err := linux.ProbeGroup(linux.FS{}, linux.FS{}, tmuxHostArch, p.pid, st.TPGID, p.term)
	if err != nil {
		return false, err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "foreground group %d:", g.Pgid)
	for _, th := range g.Threads {
		if !th.Waiting {
			fmt.Fprintf(&b, " %s/%d not waiting;", th.Comm, th.TID)
			continue
		}
		if th.HasTimeout && th.Timeout <= tmuxShortWait {
			fmt.Fprintf(&b, " %s/%d in %v for %v (short);", th.Comm, th.TID, th.Call, th.Timeout)
			continue
		}
		return true, fmt.Sprintf("%s/%d waits in %v", th.Comm, th.TID, th.Call)
	}
	return false, b.String()
}

// waitReady waits until ready holds, and returns what it saw last.
func (p *tmuxPane) waitReady() (seen string, ok bool) {
	ok = tmuxPoll(func() bool {
		var r bool
		r, seen = p.ready()
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
