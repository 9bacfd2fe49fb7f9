package vt

import (
	"fmt"
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
			o, rec := tmuxProgram(t, tc.rows, tc.cols, tc.program, tc.keys)
			got := run(t, tc.rows, tc.cols, Options{}, rec)
			t.Logf("%d bytes recorded; screen%s", len(rec), show(got.Screen.Rows))
			if tc.acs {
				for i, r := range got.Screen.Rows {
					got.Screen.Rows[i] = strings.Map(toACS, r)
				}
			}
			if !slices.Equal(got.Screen.Rows, o.screen) {
				t.Errorf("screen\n got %s\ntmux %s", show(got.Screen.Rows), show(o.screen))
			}
			if got.Screen.CursorRow != o.cy || got.Screen.CursorCol != min(o.cx, tc.cols-1) {
				t.Errorf("cursor %d,%d; tmux %d,%d", got.Screen.CursorRow, got.Screen.CursorCol, o.cy, o.cx)
			}
			if got.Screen.AltScreen != o.alt {
				t.Errorf("alternate screen %v; tmux %v", got.Screen.AltScreen, o.alt)
			}
			if !o.alt {
				if mine := trimEmpty(got.lines()); !slices.Equal(mine, o.transcript) {
					t.Errorf("transcript\n got %s\ntmux %s", show(mine), show(o.transcript))
				}
			}
		})
	}
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
// output, sends the keys, and returns what tmux shows and the recording.
func tmuxProgram(t *testing.T, rows, cols int, program string, keys [][]string) (tmuxResult, []byte) {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	// The program starts only once pipe-pane records.
	tmux := startTmux(t, dir, rows, cols, "set -g default-terminal xterm-256color\nset -sg escape-time 0\n",
		[]string{"MANPAGER=less", "PAGER=less", "LESSHISTFILE=-", "MANWIDTH=", "COLUMNS=", "LINES="},
		func(sock string) string { return fmt.Sprintf("tmux -L %s wait-for go; exec %s", sock, program) })
	tmux.run("pipe-pane", "-o", "cat > "+rec)
	tmux.run("wait-for", "-S", "go")
	settle := func() string { return tmux.settle(100*time.Millisecond, 3) }
	screen := settle()
	for _, k := range keys {
		tmux.run(append([]string{"send-keys"}, k...)...)
		screen = settle()
	}
	// pipe-pane copies through cat: wait until the recording stops
	// growing, and take it only if the screen did not change meanwhile
	// (a program that paused longer than settle waits is looked at again).
	var data []byte
	for {
		for size := -1; ; {
			time.Sleep(50 * time.Millisecond)
			var err error
			if data, err = os.ReadFile(rec); err != nil {
				t.Fatal(err)
			}
			if len(data) == size {
				break
			}
			size = len(data)
		}
		if again := tmux.run("capture-pane", "-p"); again == screen {
			break
		}
		screen = settle()
	}
	return tmux.result(screen), data
}
