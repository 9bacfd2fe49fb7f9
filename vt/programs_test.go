package vt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOracleTmuxPrograms runs real programs in tmux under TERM=xterm-256color
// (the type sessions will use), records every byte they write with
// pipe-pane, types keys, and once the screen is still, feeds the recording
// to an emulator of the same size: its screen must be tmux's, and on the
// main screen its transcript too. The recording is exactly what tmux
// applied, so timing decides only when to look, not what is compared.
func TestOracleTmuxPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs programs in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	var b strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "line %d: the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(text, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	curses := filepath.Join(dir, "menu.py")
	if err := os.WriteFile(curses, []byte(cursesScript), 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name, program string
		rows, cols    int
		keys          [][]string // tmux send-keys arguments, one call each
		acs           bool       // draws with DEC line drawing, which tmux captures as ASCII
	}{
		{"vim", "vim -u NONE -i NONE -N -n " + text, 24, 80,
			[][]string{{"G"}, {"o", "added line"}, {"Escape"}, {"gg"}, {"/fox", "Enter"}}, false},
		{"vim wide and wrapped", "vim -u NONE -i NONE -N -n " + text, 12, 40,
			[][]string{{"O", "中文字符 and " + long}, {"Escape"}, {"k"}}, false},
		{"less", "less " + text, 24, 80, [][]string{{"Space"}, {"/lazy", "Enter"}, {"b"}}, false},
		{"man", "man ls", 24, 80, [][]string{{"Space"}, {"j"}, {"j"}}, false},
		{"top", "top -d 1000", 24, 80, nil, false},
		{"python curses", "python3 " + curses, 12, 40, [][]string{{"Down"}, {"Down"}}, true},
		{"shell", "bash --norc --noprofile", 10, 40,
			[][]string{{"PS1='$ '", "Enter"}, {"printf 'a\\tb\\n'; seq 1 15", "Enter"}, {"echo " + long, "Enter"},
				{"printf 'abc\\bX\\rY\\n'", "Enter"}, {"echo " + long}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath(strings.Fields(tc.program)[0]); err != nil {
				t.Skipf("%s not installed", strings.Fields(tc.program)[0])
			}
			t.Parallel()
			// tmuxProgram compares at every step, and fails if tmux and
			// the emulator never agree.
			rec := tmuxProgram(t, tc.rows, tc.cols, tc.program, tc.keys, func(o tmuxResult, rec []byte) string {
				return programDiff(t, tc.rows, tc.cols, tc.acs, o, rec)
			})
			t.Logf("%d bytes recorded; screen%s", len(rec), show(run(t, tc.rows, tc.cols, Options{}, rec).Screen.Rows))
		})
	}
}

// programDiff feeds rec to an emulator of rows × cols and describes how
// what it shows differs from o, tmux's view of the same bytes: the screen
// (with acs, DEC line drawing mapped back to tmux's letters), the cursor,
// the alternate screen and, on the main screen, the transcript. It is
// empty when they agree.
func programDiff(t *testing.T, rows, cols int, acs bool, o tmuxResult, rec []byte) string {
	t.Helper()
	got := run(t, rows, cols, Options{}, rec)
	if acs {
		for i, r := range got.Screen.Rows {
			got.Screen.Rows[i] = strings.Map(toACS, r)
		}
	}
	var b strings.Builder
	if !slices.Equal(got.Screen.Rows, o.screen) {
		fmt.Fprintf(&b, "\nscreen\n got %s\ntmux %s", show(got.Screen.Rows), show(o.screen))
	}
	if got.Screen.CursorRow != o.cy || got.Screen.CursorCol != min(o.cx, cols-1) {
		fmt.Fprintf(&b, "\ncursor %d,%d; tmux %d,%d", got.Screen.CursorRow, got.Screen.CursorCol, o.cy, o.cx)
	}
	if got.Screen.AltScreen != o.alt {
		fmt.Fprintf(&b, "\nalternate screen %v; tmux %v", got.Screen.AltScreen, o.alt)
	}
	if !o.alt {
		if mine := trimEmpty(got.lines()); !slices.Equal(mine, o.transcript) {
			fmt.Fprintf(&b, "\ntranscript\n got %s\ntmux %s", show(mine), show(o.transcript))
		}
	}
	return b.String()
}

// toACS maps the box-drawing characters DEC line drawing shows back to
// the letters tmux keeps in its cells.
func toACS(r rune) rune {
	for i, g := range decGraphics {
		if g == r {
			return rune(0x60 + i)
		}
	}
	return r
}

func show(rows []string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "\n\t|%s|", r)
	}
	return b.String()
}

// cursesScript draws a boxed menu with a highlighted choice and waits for
// keys, as arrow-key pickers do.
const cursesScript = `import curses
def main(s):
    curses.curs_set(0)
    items = ["apple", "banana", "cherry", "durian"]
    sel = 0
    while True:
        s.erase()
        s.box()
        s.addstr(1, 2, "Pick a fruit:", curses.A_BOLD)
        for i, it in enumerate(items):
            s.addstr(3 + i, 4, ("> " if i == sel else "  ") + it, curses.A_REVERSE if i == sel else 0)
        s.refresh()
        k = s.getch()
        if k == curses.KEY_DOWN: sel = (sel + 1) % len(items)
        elif k == curses.KEY_UP: sel = (sel - 1) % len(items)
        elif k in (10, 13): break
curses.wrapper(main)
`

// tmuxProgram runs program in a tmux pane of rows × cols, records its
// output, and sends the keys. After the start and after each key it waits,
// first until the program has read all its input and waits for more (the
// runtime's /proc probe), then until diff finds nothing between what tmux
// shows and the recording so far (tmux applies the output, and pipe-pane's
// cat writes it down, a little after the program wrote it). It returns the
// recording, and fails with the last diff if tmux and the recording never
// agree.
func tmuxProgram(t *testing.T, rows, cols int, program string, keys [][]string, diff func(o tmuxResult, rec []byte) string) []byte {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	// The program starts only once pipe-pane records.
	tmux := startTmux(t, dir, rows, cols, "set -g default-terminal xterm-256color\nset -sg escape-time 0\n",
		[]string{"MANPAGER=less", "PAGER=less", "LESSHISTFILE=-", "MANWIDTH=", "COLUMNS=", "LINES="},
		func(sock string) string { return fmt.Sprintf("tmux -L %s wait-for go; exec %s", sock, program) })
	pane := tmux.pane()
	tmux.run("pipe-pane", "-o", "cat > "+rec)
	tmux.run("wait-for", "-S", "go")
	const every = 5 * time.Millisecond
	var data []byte
	step := func(what string) {
		t.Helper()
		var seen string
		if !waitUntil(every, func() bool {
			var ok bool
			ok, seen = pane.Ready()
			return ok
		}) {
			t.Fatalf("%s: %s never waited for input with its input read: %s", what, program, seen)
		}
		t.Logf("%s: %s", what, seen)
		var d string
		if !waitUntil(every, func() bool {
			o := tmux.capture()
			var err error
			if data, err = os.ReadFile(rec); errors.Is(err, fs.ErrNotExist) {
				// pipe-pane's shell creates the file a moment after
				// tmux returns; what the program wrote waits in the pipe.
				return false
			} else if err != nil {
				t.Fatal(err)
			}
			d = diff(o, data)
			return d == ""
		}) {
			t.Fatalf("%s: tmux and the emulator fed the %d bytes recorded still differ:%s", what, len(data), d)
		}
	}
	// Until the pane's shell execs the program, nothing in the pane reads
	// the terminal (the tmux client polls only its socket), so the first
	// wait seen is the program's.
	step("start")
	for _, k := range keys {
		tmux.run(append([]string{"send-keys"}, k...)...)
		// An answer from tmux after send-keys: tmux has written the keys
		// to the pane by then (see testkit.TmuxPane.Ready).
		tmux.run("display", "-p", "#{pane_pid}")
		step(fmt.Sprintf("after keys %q", k))
	}
	return data
}
