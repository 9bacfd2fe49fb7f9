package vt

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// randomOutput builds output from the sequences full-screen programs,
// shells and progress displays use, avoiding only the documented
// differences from tmux (ICH of more than one cell and IL outside the
// scroll region, where tmux leaves old text behind; CHT, ED 3).
func randomOutput(r *rand.Rand, rows, cols, n int) string {
	var b strings.Builder
	words := []string{"a", "hello", "x", "progress 50%", "0123456789", "é", "tab\tstop", "  "}
	for range n {
		switch r.IntN(24) {
		case 0, 1, 2, 3:
			b.WriteString(words[r.IntN(len(words))])
		case 4, 5:
			b.WriteString("\r\n")
		case 6:
			b.WriteString("\r")
		case 7:
			b.WriteString("\b")
		case 8:
			fmt.Fprintf(&b, "\x1b[%d;%dH", 1+r.IntN(rows+2), 1+r.IntN(cols+2))
		case 9:
			fmt.Fprintf(&b, "\x1b[%dK", r.IntN(3))
		case 10:
			fmt.Fprintf(&b, "\x1b[%dJ", r.IntN(2))
		case 11:
			fmt.Fprintf(&b, "\x1b[%d%c", 1+r.IntN(4), "ABCD"[r.IntN(4)])
		case 12:
			// ICH of one cell, and IL inside the region only: tmux
			// leaves old text in the inserted cells and rows otherwise.
			switch k := r.IntN(5); k {
			case 0:
				b.WriteString("\x1b[@")
			case 1:
				fmt.Fprintf(&b, "\x1b[r\x1b[%dH\x1b[%dL", 1+r.IntN(rows), 1+r.IntN(3))
			default:
				fmt.Fprintf(&b, "\x1b[%d%c", 1+r.IntN(3), "MPX"[k-2])
			}
		case 13:
			t := 1 + r.IntN(rows)
			fmt.Fprintf(&b, "\x1b[%d;%dr", t, t+r.IntN(rows-t+1))
		case 14:
			b.WriteString("\x1b[r")
		case 15:
			b.WriteString("\n")
		case 16:
			b.WriteString([]string{"\x1bM", "\x1bD", "\x1bE", "\x1b7", "\x1b8"}[r.IntN(5)])
		case 17:
			fmt.Fprintf(&b, "\x1b[%d%c", 1+r.IntN(2), "ST"[r.IntN(2)])
		case 18:
			b.WriteString([]string{"\r\x1b[2Kab中文", "\r\x1b[2K中文"}[r.IntN(2)])
		case 19:
			fmt.Fprintf(&b, "\x1b[%dG", 1+r.IntN(cols))
		case 20:
			b.WriteString([]string{"\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l"}[r.IntN(4)])
		case 21:
			b.WriteString([]string{"\x1b[?7l", "\x1b[?7h", "\x1b[?6h", "\x1b[?6l", "\x1b[2J", "\x1b[H"}[r.IntN(6)])
		case 22:
			b.WriteString([]string{"\x1bH", "\x1b[g", "\x1b[3g", "\t", "\x1b[2Z"}[r.IntN(5)])
		case 23:
			fmt.Fprintf(&b, "x\x1b[%db", 1+r.IntN(cols))
		}
	}
	return b.String()
}

// TestOracleTmuxRandom compares the emulator with tmux on random output
// built from the sequences programs use, at random small sizes (so lines
// wrap and scroll often). VT_SEED and VT_COUNT choose other and more cases
// (VT_COUNT=150 for a few seeds is how the rules in screen.go were checked).
// A failure reports the shortest prefix of the input that differs.
func TestOracleTmuxRandom(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	seed, _ := strconv.Atoi(os.Getenv("VT_SEED"))
	count, _ := strconv.Atoi(os.Getenv("VT_COUNT"))
	if count == 0 {
		count = 30
	}
	for i := range count {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		rows, cols := 3+r.IntN(5), 8+r.IntN(12)
		in := randomOutput(r, rows, cols, 10+r.IntN(60))
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			if differs(t, rows, cols, in) == "" {
				return
			}
			lo, hi := 0, len(in)
			for hi-lo > 1 {
				if m := (lo + hi) / 2; differs(t, rows, cols, in[:m]) != "" {
					hi = m
				} else {
					lo = m
				}
			}
			t.Errorf("%dx%d %q\nfirst differs after %q:%s", rows, cols, in, in[:hi], differs(t, rows, cols, in[:hi]))
		})
	}
}

// differs runs in through tmux and the emulator and describes how they
// differ, or returns "".
func differs(t *testing.T, rows, cols int, in string) string {
	o := tmuxRun(t, rows, cols, []byte(in), nil)
	got := run(t, rows, cols, Options{}, []byte(in))
	mine := trimEmpty(got.lines())
	if slices.Equal(got.Screen.Rows, o.screen) && got.Screen.AltScreen == o.alt &&
		got.Screen.CursorRow == o.cy && got.Screen.CursorCol == min(o.cx, cols-1) &&
		(o.alt || slices.Equal(mine, o.transcript)) {
		return ""
	}
	return fmt.Sprintf("\nscreen%s\ntmux%s\ncursor %d,%d alt %v; tmux %d,%d alt %v\ntranscript%s\ntmux%s",
		show(got.Screen.Rows), show(o.screen), got.Screen.CursorRow, got.Screen.CursorCol, got.Screen.AltScreen,
		o.cy, o.cx, o.alt, show(mine), show(o.transcript))
}
