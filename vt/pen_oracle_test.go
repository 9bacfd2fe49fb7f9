package vt

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// penCases are screens in colour the pens are compared with tmux's on.
var penCases = []struct {
	name       string
	rows, cols int
	in         string
}{
	{"ls", 6, 50, lsColour},
	{"vim", 12, 40, vimScreen(12, 40)},
	{"256 and truecolor", 4, 30, "\x1b[38;5;196;48;5;22mA\x1b[38;2;1;2;3;48;2;250;251;252mB\x1b[38:2::9:8:7mC" +
		"\x1b[48:5:17mD\x1b[mE\x1b[1;3;4:3;7;9mF\x1b[22;1mG\x1b[90;107mH\x1b[m"},
	{"attributes and resets", 3, 40, "\x1b[1mb\x1b[2md\x1b[22mn\x1b[3mi\x1b[23mn\x1b[4mu\x1b[24mn\x1b[5mk\x1b[25mn" +
		"\x1b[7mr\x1b[27mn\x1b[9ms\x1b[29mn\x1b[31;44mc\x1b[39md\x1b[49mn\x1b[4:2mU\x1b[4:0mn\x1b[21mD\x1b[m"},
	{"background erase", 5, 12, "ab\x1b[44m\x1b[K\r\n\x1b[41mx\x1b[2X\x1b[m\r\n\x1b[42m\x1b[2K\x1b[m\r\nabcdef\x1b[1;2H\x1b[43m\x1b[2@\x1b[m"},
	{"scroll with a background", 3, 10, "a\r\nb\r\n\x1b[45mc\r\nd\x1b[m"},
	{"wide characters in colour", 3, 12, "\x1b[32m日本\x1b[m語\x1b[7me\u0301\x1b[m"},
}

// TestOracleTmuxPens compares every cell's pen with tmux's: `capture-pane
// -p -e -N` prints each row with the SGR sequences of its cells, which a
// new emulator reads back row by row.
func TestOracleTmuxPens(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	for _, tc := range penCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows := tmuxCapturePens(t, tc.rows, tc.cols, []byte(tc.in))
			f := fed(t, tc.rows, tc.cols, "")
			for y, r := range rows {
				f.Feed(fmt.Appendf(nil, "\x1b[%dH%s", y+1, r))
			}
			e := fed(t, tc.rows, tc.cols, tc.in)
			for y := range tc.rows {
				// The capture ends where tmux counts the row as used;
				// cells erased in a background colour after that are
				// not in it (tmux draws them).
				for x := range len(f.scr.line(y).cells) {
					text, want := f.Cell(y, x)
					if _, got := e.Cell(y, x); got != want {
						t.Errorf("(%d,%d) %q: pen %+v, tmux %+v (row %q)", y, x, text, got, want, rows[y])
					}
				}
			}
		})
	}
}

// tmuxCapturePens runs input through tmux and returns `capture-pane -p
// -e -N`: the rows with their SGR sequences and trailing blanks (which
// may have a background colour). A row's sequences go on from the pen
// the row before ended with.
func tmuxCapturePens(t *testing.T, rows, cols int, input []byte) []string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "in")
	if err := os.WriteFile(file, input, 0o600); err != nil {
		t.Fatal(err)
	}
	tmux := startTmux(t, dir, rows, cols, "", nil, func(sock string) string {
		return fmt.Sprintf("stty -opost -echo; cat %s; tmux -L %s wait-for -S done; exec sleep 600", file, sock)
	})
	tmux.run("wait-for", "done")
	tmux.settle()
	// tmux 3.3a prints the codes of its attribute table above 10 as
	// "n:m" (42 as 4:2, a double underline), overline (53) too: 5:3.
	capture := strings.NewReplacer(";5:3", ";53", "[5:3", "[53").Replace(tmux.run("capture-pane", "-p", "-e", "-N"))
	out := strings.Split(strings.TrimSuffix(capture, "\n"), "\n")
	if len(out) != rows {
		t.Fatalf("tmux captured %d rows, want %d: %q", len(out), rows, out)
	}
	return out
}

// TestOracleTmuxPensRandom compares pens with tmux's on random output
// with SGR sequences between the sequences of randomOutput. VT_SEED and
// VT_COUNT choose other and more cases.
func TestOracleTmuxPensRandom(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	seed, _ := strconv.Atoi(os.Getenv("VT_SEED"))
	count, _ := strconv.Atoi(os.Getenv("VT_COUNT"))
	if count == 0 {
		count = 12
	}
	for i := range count {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		rows, cols := 3+r.IntN(5), 8+r.IntN(12)
		var b strings.Builder
		for range 10 + r.IntN(40) {
			if r.IntN(3) == 0 {
				b.WriteString("\x1b[" + randomSGR[r.IntN(len(randomSGR))] + "m")
				continue
			}
			b.WriteString(randomOutput(r, rows, cols, 1))
		}
		in := b.String()
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			captured := tmuxCapturePens(t, rows, cols, []byte(in))
			f := fed(t, rows, cols, "")
			for y, row := range captured {
				f.Feed(fmt.Appendf(nil, "\x1b[%dH%s", y+1, row))
			}
			e := fed(t, rows, cols, in)
			for y := range rows {
				for x := range len(f.scr.line(y).cells) {
					// A right half is drawn with its left half, whose
					// pen is compared; an erase over it leaves tmux's
					// padding cell where this package has a blank.
					text, want := f.Cell(y, x)
					if _, got := e.Cell(y, x); got != want && text != "" {
						t.Fatalf("%dx%d %q:\n(%d,%d) %q: pen %+v, tmux %+v (row %q)", rows, cols, in, y, x, text, got, want, captured[y])
					}
				}
			}
		})
	}
}

// randomSGR are the SGR parameters random tests choose from.
var randomSGR = []string{"0", "1", "2", "3", "4", "4:3", "5", "7", "8", "9", "53", "22", "24", "27", "31", "42",
	"93", "104", "39", "49", "38;5;200", "48;5;17", "38;2;1;2;3", "48:2::9:8:7", "38:5:3", ""}
