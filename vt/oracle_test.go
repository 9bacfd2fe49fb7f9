package vt

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The oracle: tmux, an independent terminal, fed the same bytes at the same
// size. Its capture-pane is the definition of the screen (-p) and of the
// transcript (-p -J -S -, with trailing spaces trimmed).

var oracleCases = []struct {
	name       string
	rows, cols int
	in         string
}{
	{"text cr bs erase", 6, 20, "hello world\r\nabc\bX\r\nprogress 10%\rprogress 99%\r\n" +
		"N\bNA\bAM\bME\bE\r\nabcdef\x1b[3D\x1b[K!\r\nxyz\x1b[1K"},
	{"wrapped lines and history", 4, 10, "0123456789abcdefghijXYZ\r\nshort\r\n" +
		"aaaaaaaaaabbbbbbbbbbcccccccccc\r\n1\r\n2\r\n3\r\nend"},
	{"seq", 5, 12, seqText(1, 40)},
	{"tabs and tab stops", 5, 30, "a\tb\tc\r\n\x1b[3g\x1b[5G\x1bH\rx\ty\r\n\tzw\x1b[Zv"},
	{"scroll region", 8, 20, "l1\r\nl2\r\nl3\r\nl4\r\nl5\r\nl6\r\nl7\r\nstatus\x1b[2;6r\x1b[6;1H" +
		"r1\nr2\nr3\r\n\x1b[2;1H\x1bMrev\x1b[r\x1b[8;1Hbottom"},
	{"scroll region from the top", 6, 20, "\x1b[1;5r\x1b[5;1Hone\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix" +
		"\x1b[6;1Hfixed status\x1b[r"},
	{"insert and delete lines", 6, 20, "a\r\nb\r\nc\r\nd\r\ne\x1b[2;1H\x1b[2L\x1b[5;1H\x1b[M"},
	{"insert delete erase chars", 4, 20, "abcdefgh\x1b[3G\x1b[2@XY\r\n12345678\x1b[2G\x1b[3P\r\n" +
		"abcdefgh\x1b[4G\x1b[3X\r\nabcdef\x1b[3G\x1b[4hZZ\x1b[4l"},
	{"erase display", 5, 10, "11111\r\n22222\r\n33333\r\n44444\x1b[2;3H\x1b[J\x1b[1;2H\x1b[1J"},
	{"erase display clears into history", 4, 10, "one\r\ntwo\r\nthree\x1b[H\x1b[2Jnew"},
	{"erase from home clears into history", 4, 10, "one\r\ntwo\x1b[H\x1b[Jnew"},
	{"cursor moves", 6, 20, "\x1b[3;5Hx\x1b[2Ay\x1b[10Cz\x1b[20Dw\x1b[Bv\x1b[4dq\x1b[12`r\x1b[2Es\x1b[Ft" +
		"\x1b[100;100Hcorner"},
	{"save restore cursor", 5, 20, "ab\x1b7\x1b[4;10Hfar\x1b8cd\x1b[s\x1b[2;2Hx\x1b[uef"},
	{"origin mode", 8, 20, "\x1b[3;6r\x1b[?6h\x1b[1;1Htop\x1b[10;1Hbottom\x1b[?6l\x1b[1;1Hhome\x1b[r"},
	{"autowrap off", 4, 10, "\x1b[?7l0123456789abc\r\n\x1b[?7hwrapped again!"},
	{"pending wrap", 4, 10, "0123456789\x1b[K\r\n0123456789\bX\r\n0123456789\x1b[Ay"},
	{"wide characters", 5, 10, "中文字符\r\n123456789中x\r\né e\u0301 \U0001F600!\r\n" +
		"12345678中\b\bAB"},
	{"wide characters wrap", 4, 7, "中文中文中文中文 end\r\nab中cd中ef"},
	{"repeat", 3, 20, "a\x1b[5b-\x1b[3b"},
	{"index and next line", 4, 10, "a\x1bDb\x1bEc\x1bMd"},
	{"multi-line progress", 6, 30, multiProgress(4)},
	{"alternate screen drawn", 6, 20, "shell$ vim\r\n\x1b[?1049h\x1b[H\x1b[2J~\r\n~\r\n\x1b[6;1H:q!" +
		"\x1b[2;2Hhello"},
	{"alternate screen left", 6, 20, "shell$ vim\r\n\x1b[?1049h\x1b[H\x1b[2J~\r\n~\r\n\x1b[6;1H:q!" +
		"\x1b[?1049lshell$ "},
	{"alternate screen 47", 6, 20, "keep\r\n\x1b[?47hALT\x1b[?47l\r\nback"},
	{"reset", 4, 20, "junk\x1b[?7l\x1bcafter reset 0123456789abc"},
	{"dec alignment", 3, 5, "\x1b#8\x1b[2;2Hx"},
}

// acceptedDifferences are the cases where this package differs from tmux
// on purpose (see the package doc); the oracle does not compare them.
var acceptedDifferences = map[string]string{
	"transcript malformed utf-8":               "tmux drops malformed UTF-8; the transcript shows U+FFFD",
	"transcript clear with ED 3 keeps history": "tmux erases its history on ED 3; final lines stay final",
}

func seqText(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\r\n", i)
	}
	return b.String()
}

func TestOracleTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	cases := oracleCases
	for _, tc := range transcriptCases {
		cases = append(cases, struct {
			name       string
			rows, cols int
			in         string
		}{"transcript " + tc.name, tc.rows, tc.cols, tc.in})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if why, ok := acceptedDifferences[tc.name]; ok {
				t.Skip(why)
			}
			t.Parallel()
			o := tmuxRun(t, tc.rows, tc.cols, []byte(tc.in), nil)
			got := checkChunking(t, tc.rows, tc.cols, Options{}, []byte(tc.in))
			if !slices.Equal(got.Screen.Rows, o.screen) {
				t.Errorf("screen\n got %q\ntmux %q", got.Screen.Rows, o.screen)
			}
			if got.Screen.CursorRow != o.cy || got.Screen.CursorCol != min(o.cx, tc.cols-1) {
				t.Errorf("cursor %d,%d; tmux %d,%d", got.Screen.CursorRow, got.Screen.CursorCol, o.cy, o.cx)
			}
			if got.Screen.AltScreen != o.alt {
				t.Errorf("alternate screen %v; tmux %v", got.Screen.AltScreen, o.alt)
			}
			if o.alt {
				return // tmux shows the alternate screen; the transcript shows the main one
			}
			if mine := trimEmpty(got.lines()); !slices.Equal(mine, o.transcript) {
				t.Errorf("transcript\n got %q\ntmux %q", mine, o.transcript)
			}
		})
	}
}

// TestOracleTmuxResize: after a resize the transcript reads as tmux's
// (tmux may lay the rows out differently: it keeps the cursor's row where
// it was and fills the screen from its history).
func TestOracleTmuxResize(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	for _, tc := range []struct {
		name       string
		rows, cols int
		in         string
		to         Size
	}{
		{"narrower", 5, 20, "hello world\r\nsecond line here\r\n$ ", Size{5, 8}},
		{"wider", 4, 10, "0123456789abcdefghij\r\n1\r\n2\r\n$ ", Size{4, 20}},
		{"shorter", 6, 10, "a\r\nb\r\nc\r\nd\r\n$ ", Size{3, 10}},
		{"wide characters", 4, 9, "中文字符中文字符\r\n$ ", Size{4, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tmuxRun(t, tc.rows, tc.cols, []byte(tc.in), &tc.to)
			e, err := New(tc.rows, tc.cols, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e.Feed([]byte(tc.in))
			if err := e.Resize(tc.to.Rows, tc.to.Cols); err != nil {
				t.Fatal(err)
			}
			tr := e.Transcript(0)
			if mine := trimEmpty(append(tr.Final, tr.Tail...)); !slices.Equal(mine, o.transcript) {
				t.Errorf("transcript\n got %q\ntmux %q", mine, o.transcript)
			}
		})
	}
}

// tmuxRun shows input in a detached tmux pane of rows × cols, through a
// server of its own, resizes the window to resize if that is not nil, and
// reads it back.
func tmuxRun(t *testing.T, rows, cols int, input []byte, resize *Size) tmuxResult {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "in")
	if err := os.WriteFile(file, input, 0o600); err != nil {
		t.Fatal(err)
	}
	// The pane writes the bytes unchanged (-opost: no CR added to LF;
	// -echo: tmux's own answers to queries are not echoed), then signals.
	tmux := startTmux(t, dir, rows, cols, "", nil, func(sock string) string {
		return fmt.Sprintf("stty -opost -echo; cat %s; tmux -L %s wait-for -S done; exec sleep 600", file, sock)
	})
	tmux.run("wait-for", "done")
	// wait-for returns when cat is done writing; let tmux read it all.
	screen := tmux.settle()
	if resize != nil {
		tmux.run("resize-window", "-x", strconv.Itoa(resize.Cols), "-y", strconv.Itoa(resize.Rows))
		screen = tmux.settle()
	}
	return tmux.result(screen)
}

// trimEmpty drops trailing empty lines: tmux shows every row, the tail
// stops at the cursor or the last text.
func trimEmpty(l []string) []string {
	for len(l) > 0 && l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}
