package vt

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rendered feeds e's Render to a new emulator of its size.
func rendered(t testing.TB, e *Emulator, history int) *Emulator {
	t.Helper()
	f, err := New(e.rows, e.cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Feed(e.Render(history))
	return f
}

// screenCells describes every cell of s: text and pen, but not of the
// rows in skip.
func screenCells(e *Emulator, s *screen, skip map[int]bool) []string {
	var out []string
	for y := range e.rows {
		if skip[y] {
			continue
		}
		l := s.line(y)
		for x := range e.cols {
			text := string(appendCell(nil, l, x))
			out = append(out, fmt.Sprintf("(%d,%d) %q %+v", y, x, text, e.penOf(l.penAt(x))))
		}
	}
	return out
}

// splitRows returns the rows of s where a wide character's halves were
// moved apart (ICH, DCH and erasing leave them so, as in tmux's grid). A
// terminal that keeps wide characters whole, as xterm.js does, cannot
// show them, and Render draws them only as far as its own emulator can be
// made to hold them.
func splitRows(e *Emulator, s *screen) map[int]bool {
	rows := map[int]bool{}
	for y := range e.rows {
		l := s.line(y)
		for x, c := range l.cells {
			head := c != blank && c != tail && runeWidth(c) == 2
			if head && (x+1 >= len(l.cells) || l.cells[x+1] != tail) ||
				c == tail && (x == 0 || l.cells[x-1] == blank || l.cells[x-1] == tail || runeWidth(l.cells[x-1]) != 2) {
				rows[y] = true
			}
		}
	}
	return rows
}

// sameView describes how f differs from e in what a viewer sees and what
// the next output would do: the screen, the cells' pens on both screens,
// modes, margins, the current and saved pens, the tail of the transcript;
// "" when it does not. Unless strict, rows of e with split wide
// characters are not compared (splitRows).
func sameView(e, f *Emulator, strict bool) string {
	var skipMain, skipAlt map[int]bool
	// Origin mode holds the cursor in the region; only DECRC puts it
	// below, and Render leaves it at the bottom margin.
	looseCursor := !strict && e.modes&modeOrigin != 0 && e.y > e.bot
	if !strict {
		skipMain = splitRows(e, &e.main)
		if e.alt != nil {
			skipAlt = splitRows(e, e.alt)
		}
	}
	type view struct {
		Screen     Screen
		Modes      Modes
		Top, Bot   int
		Pen        Pen
		Saved      cursor
		Tail       []string
		Hidden     Hidden
		Tabs, Alt  []bool
		Charsets   [2]charset
		GL         int
		Main, Show []string
	}
	get := func(e *Emulator) view {
		v := view{Screen: e.Screen(), Modes: e.Modes(), Pen: e.pen.Pen(), Saved: e.saved, Charsets: e.g, GL: e.gl}
		v.Top, v.Bot = e.Margins()
		v.Saved.x = min(v.Saved.x, e.cols-1)
		v.Tail, _ = e.tail(0)
		v.Hidden, _ = e.Hidden()
		v.Main = screenCells(e, &e.main, skipMain)
		skipShown := skipMain
		if e.alt != nil {
			v.Show = screenCells(e, e.alt, skipAlt)
			skipShown = skipAlt
		}
		for y := range skipShown {
			v.Screen.Rows[y], v.Screen.Hash = "(split)", ""
		}
		if looseCursor {
			v.Screen.CursorRow, v.Screen.Hash, v.Hidden.CursorRow, v.Tail = -1, "", -1, nil
		}
		if len(skipMain) > 0 {
			v.Tail, v.Hidden.Rows = nil, nil
		}
		if e.tabs != nil {
			for x := range e.cols {
				v.Tabs = append(v.Tabs, e.isTab(x))
			}
		}
		return v
	}
	a, b := get(e), get(f)
	if reflect.DeepEqual(a, b) {
		return ""
	}
	var d strings.Builder
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(fa, fb) {
			continue
		}
		if sa, ok := fa.([]string); ok {
			sb := fb.([]string)
			for k := range min(len(sa), len(sb)) {
				if sa[k] != sb[k] {
					fmt.Fprintf(&d, "\n%s[%d]: %s\n  rendered %s", va.Type().Field(i).Name, k, sa[k], sb[k])
					break
				}
			}
			if len(sa) != len(sb) {
				fmt.Fprintf(&d, "\n%s: %q\n  rendered %q", va.Type().Field(i).Name, sa, sb)
			}
			continue
		}
		fmt.Fprintf(&d, "\n%s: %+v\n  rendered %+v", va.Type().Field(i).Name, fa, fb)
	}
	return d.String()
}

// lsColour is what `ls --color` prints: directories bold blue,
// executables bold green, links cyan.
const lsColour = "\x1b[0m\x1b[01;34mbin\x1b[0m  \x1b[01;32mbuild.sh\x1b[0m  \x1b[01;36mlink\x1b[0m  plain.txt\r\n" +
	"\x1b[01;34mdocs\x1b[0m  \x1b[30;42mshared\x1b[0m  \x1b[37;41msetuid\x1b[0m\r\n$ "

// vimScreen is a vim-like screen: text in colour, `~` lines, a reverse
// status line, a scroll region for the text, the cursor in the text.
func vimScreen(rows, cols int) string {
	var b strings.Builder
	b.WriteString("$ vim main.go\r\n\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J\x1b[?25l")
	b.WriteString("\x1b[38;5;130mpackage\x1b[m main\r\n\r\n\x1b[38;5;130mfunc\x1b[m \x1b[36mmain\x1b[m() {\r\n")
	b.WriteString("\t\x1b[38;2;255;100;0mprintln\x1b[m(\x1b[31m\"hi\"\x1b[m)\r\n}")
	for y := 6; y < rows; y++ {
		fmt.Fprintf(&b, "\x1b[%dH\x1b[94m~\x1b[m", y)
	}
	fmt.Fprintf(&b, "\x1b[%dH\x1b[7mmain.go [+]%s\x1b[m", rows-1, strings.Repeat(" ", cols-11))
	fmt.Fprintf(&b, "\x1b[%dH-- INSERT --", rows)
	fmt.Fprintf(&b, "\x1b[1;%dr\x1b[4;9H\x1b[?25h\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[2 q", rows-2)
	return b.String()
}

// TestRender: what Render writes makes a new emulator show the same, and
// draw what follows the same.
func TestRender(t *testing.T) {
	long := strings.Repeat("0123456789", 5)
	for _, tc := range []struct {
		name       string
		rows, cols int
		in         string
	}{
		{"empty", 4, 10, ""},
		{"ls", 6, 50, lsColour},
		{"ls with history", 3, 50, lsColour + "ls\r\n" + lsColour + "ls\r\n" + lsColour},
		{"vim", 12, 40, vimScreen(12, 40)},
		{"256 and truecolor", 4, 30, "\x1b[38;5;196;48;5;22mA\x1b[38;2;1;2;3;48;2;250;251;252mB\x1b[38:2::9:8:7mC" +
			"\x1b[48:5:17mD\x1b[mE\x1b[1;2;3;4:3;5;7;8;9;53mF\x1b[22;1mG\x1b[90;107mH"},
		{"wide and combining", 4, 12, "日本語\x1b[31me\u0301\x1b[m a\u200db \x1b[44m中\x1b[m\r\n1234567890日本"},
		{"hidden cursor", 3, 10, "ab\x1b[?25l"},
		{"background erase", 4, 10, "\x1b[44mab\x1b[K\r\n\x1b[41m\x1b[2K\r\n\x1b[m"},
		{"wrapped lines", 4, 10, long + "\x1b[33m" + long[:15]},
		{"wrapped onto a blank", 4, 10, "0123456789 \x1b[44m   "},
		{"pending wrap", 3, 10, "\x1b[32m0123456789"},
		{"pending wrap on a wide character", 3, 10, "01234567日"},
		{"pending wrap, autowrap off", 3, 10, "0123456789\x1b[?7l"},
		{"autowrap off", 3, 10, "\x1b[?7l0123456789abc"},
		{"origin mode", 6, 10, "\x1b[2;5r\x1b[?6h\x1b[2;3Hx"},
		{"saved cursor", 4, 10, "\x1b[2;3H\x1b[35m\x1b(0\x1b7\x1b(B\x1b[m\x1b[4;1Hq"},
		{"charsets", 4, 10, "\x1b(0lqk\x1b)0\x0e"},
		{"tab stops", 3, 30, "\x1b[3g\x1b[5G\x1bH\x1b[12G\x1bH\r\ta\tb"},
		{"modes", 3, 10, "\x1b[?1h\x1b=\x1b[?2004h\x1b[?1004h\x1b[?1003h\x1b[?1015h\x1b[4h\x1b[20h\x1b[5 q\x1b[?12h"},
		{"alternate screen 47", 4, 10, "shell\r\n\x1b[?47h\x1b[44mALT"},
		{"alternate screen with DECSC", 4, 10, "sh\x1b[?1049h\x1b[3;3H\x1b7\x1b[1;1Hx"},
		{"pen after", 3, 10, "\x1b[1;4:3;38;5;9mx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := fed(t, tc.rows, tc.cols, tc.in)
			f := rendered(t, e, 100)
			if d := sameView(e, f, true); d != "" {
				t.Fatalf("render %q differs:%s", e.Render(100), d)
			}
			// What the program prints next draws the same on both.
			next := "\x1b[2Anext\x1b[K\r\n\tmore" + "\x1b[?1049l" + "after"
			e.Feed([]byte(next))
			f.Feed([]byte(next))
			if d := sameView(e, f, true); d != "" {
				t.Fatalf("after more output:%s", d)
			}
		})
	}
}

// TestRenderHistory: the newest history lines come first, as final lines
// of the new terminal, and the screen starts blank under them.
func TestRenderHistory(t *testing.T) {
	e := fed(t, 3, 10, seqText(1, 20)+"$ ")
	for _, n := range []int{0, 1, 5, 100} {
		f := rendered(t, e, n)
		want := e.Transcript(0).Final
		want = want[max(0, len(want)-n):]
		if got := f.Transcript(0).Final; !slices.Equal(got, want) {
			t.Errorf("history %d: final lines %q, want %q", n, got, want)
		}
		if d := sameView(e, f, true); d != "" {
			t.Errorf("history %d:%s", n, d)
		}
	}
}

// randomStyled is randomOutput with pens, modes and character sets
// changing in between, and wide characters and combining marks.
func randomStyled(r *rand.Rand, rows, cols, n int) string {
	var b strings.Builder
	sgr := []string{"0", "1", "2", "3", "4", "4:3", "5", "7", "8", "9", "53", "22", "24", "27", "31", "42", "93",
		"104", "39", "49", "38;5;200", "48;5;17", "38;2;1;2;3", "48:2::9:8:7", "38:5:3"}
	modes := []string{"\x1b[?25l", "\x1b[?25h", "\x1b[?1000h", "\x1b[?1006h", "\x1b[?2004h", "\x1b[?1h", "\x1b[4h",
		"\x1b[4l", "\x1b[3 q", "\x1b(0", "\x1b(B", "\x0e", "\x0f", "\x1b[?1004h", "日本", "e\u0301", "a\u200db", "\x1b[?7l",
		"\x1b[?7h"}
	for range n {
		switch r.IntN(6) {
		case 0, 1:
			b.WriteString("\x1b[")
			for k := range 1 + r.IntN(3) {
				if k > 0 {
					b.WriteByte(';')
				}
				b.WriteString(sgr[r.IntN(len(sgr))])
			}
			b.WriteByte('m')
		case 2:
			b.WriteString(modes[r.IntN(len(modes))])
		default:
			b.WriteString(randomOutput(r, rows, cols, 1+r.IntN(3)))
		}
	}
	return b.String()
}

// TestRenderRandom renders emulators fed random styled output and feeds
// the result to new ones. VT_SEED and VT_COUNT choose other and more
// cases; a failure reports the shortest prefix that differs.
func TestRenderRandom(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("VT_SEED"))
	count, _ := strconv.Atoi(os.Getenv("VT_COUNT"))
	if count == 0 {
		count = 300
	}
	differs := func(rows, cols int, in string) string {
		e := fed(t, rows, cols, in)
		return sameView(e, rendered(t, e, 50), false)
	}
	for i := range count {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		rows, cols := 3+r.IntN(6), 8+r.IntN(14)
		in := randomStyled(r, rows, cols, 10+r.IntN(80))
		if differs(rows, cols, in) == "" {
			continue
		}
		lo, hi := 0, len(in)
		for hi-lo > 1 {
			if m := (lo + hi) / 2; differs(rows, cols, in[:m]) != "" {
				hi = m
			} else {
				lo = m
			}
		}
		t.Fatalf("case %d, %dx%d, first differs after %q:%s", i, rows, cols, in[:hi], differs(rows, cols, in[:hi]))
	}
}
