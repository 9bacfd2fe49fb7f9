package vt

import (
	"fmt"
	"testing"
)

// fed returns a rows × cols emulator fed in.
func fed(t testing.TB, rows, cols int, in string) *Emulator {
	t.Helper()
	e, err := New(rows, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte(in))
	return e
}

// TestSGR: each SGR form sets the pen the next character is drawn with.
func TestSGR(t *testing.T) {
	red, blue := ANSIColor(1), ANSIColor(4)
	all := Pen{Bold: true, Dim: true, Italic: true, Blink: true, Reverse: true, Invisible: true, Strike: true,
		Overline: true, Underline: UnderlineSingle}
	for _, tc := range []struct {
		in   string
		want Pen
	}{
		{"", Pen{}},
		{"\x1b[31m", Pen{Fg: red}},
		{"\x1b[1;91;104m", Pen{Bold: true, Fg: ANSIColor(9), Bg: ANSIColor(12)}},
		{"\x1b[44;37m", Pen{Fg: ANSIColor(7), Bg: blue}},
		{"\x1b[38;5;208m", Pen{Fg: PaletteColor(208)}},
		{"\x1b[38:5:208m", Pen{Fg: PaletteColor(208)}},
		{"\x1b[48;5;1m", Pen{Bg: PaletteColor(1)}},
		{"\x1b[48;2;10;20;30m", Pen{Bg: RGBColor(10, 20, 30)}},
		{"\x1b[38:2::10:20:30m", Pen{Fg: RGBColor(10, 20, 30)}},
		{"\x1b[38:2:10:20:30m", Pen{Fg: RGBColor(10, 20, 30)}},
		{"\x1b[38:2:0:10:20:30m", Pen{Fg: RGBColor(10, 20, 30)}},
		{"\x1b[38;5;1;1m", Pen{Fg: PaletteColor(1), Bold: true}},
		{"\x1b[38;2;1;2;3;4m", Pen{Fg: RGBColor(1, 2, 3), Underline: UnderlineSingle}},
		{"\x1b[38:2::1:2:3;1m", Pen{Fg: RGBColor(1, 2, 3), Bold: true}},
		{"\x1b[58:5:3;1m", Pen{Bold: true}},
		{"\x1b[58;2;1;2;3;3m", Pen{Italic: true}},
		{"\x1b[38;2;1;2m", Pen{}},
		{"\x1b[38;9;1m", Pen{Bold: true}},
		{"\x1b[4m", Pen{Underline: UnderlineSingle}},
		{"\x1b[4:3m", Pen{Underline: UnderlineCurly}},
		{"\x1b[4:5m", Pen{Underline: UnderlineDashed}},
		{"\x1b[4:3m\x1b[4:0m", Pen{}},
		{"\x1b[21m", Pen{Underline: UnderlineDouble}},
		{"\x1b[3:1m", Pen{Italic: true}},
		{"\x1b[1;2;3;4;5;7;8;9;53m", all},
		{"\x1b[1;2;3;4;5;7;8;9;53m\x1b[22;23;24;25;27;28;29;55m", Pen{}},
		{"\x1b[1;2m\x1b[22m", Pen{}},
		{"\x1b[1;31;44m\x1b[0m", Pen{}},
		{"\x1b[1;31;44m\x1b[m", Pen{}},
		{"\x1b[1;31;44m\x1b[39;49m", Pen{Bold: true}},
		{"\x1b[31m\x1b7\x1b[0m\x1b8", Pen{Fg: red}},
		{"\x1b[31m\x1b[!p", Pen{}},
		{"\x1b[31m\x1bc", Pen{}},
		{"\x1b[31m\x1b[?1049h\x1b[32m\x1b[?1049l", Pen{Fg: red}},
	} {
		e := fed(t, 3, 10, tc.in+"x")
		text, got := e.Cell(0, 0)
		if text != "x" || got != tc.want || e.pen.Pen() != tc.want {
			t.Errorf("%q: cell %q %+v (current %+v), want %+v", tc.in, text, got, e.pen, tc.want)
		}
	}
}

// TestBCE: erasing, inserting, deleting and scrolling fill with the
// current background colour, as tmux and xterm do; other attributes are
// not erased with.
func TestBCE(t *testing.T) {
	bg := Pen{Bg: ANSIColor(4)}
	for _, tc := range []struct {
		name     string
		in       string
		row, col int
		want     Pen
	}{
		{"ED 2", "ab\x1b[1;7;44m\x1b[2J", 2, 5, bg},
		{"ED 0", "ab\x1b[44m\x1b[2;3H\x1b[J", 2, 9, bg},
		{"ED 0 before", "ab\x1b[44m\x1b[2;3H\x1b[J", 0, 0, Pen{}},
		{"EL 0", "abcdef\x1b[44m\x1b[1;3H\x1b[K", 0, 9, bg},
		{"EL 1", "abcdef\x1b[44m\x1b[1;3H\x1b[1K", 0, 2, bg},
		{"EL 2 on an empty row", "\x1b[44m\x1b[2;3H\x1b[2K", 1, 9, bg},
		{"ECH", "abcdef\x1b[44m\x1b[1;2H\x1b[2X", 0, 2, bg},
		{"ECH leaves the rest", "abcdef\x1b[44m\x1b[1;2H\x1b[2X", 0, 3, Pen{}},
		{"ICH", "abcdef\x1b[44m\x1b[1;2H\x1b[2@", 0, 2, bg},
		{"ICH moves pens", "a\x1b[31mb\x1b[44m\x1b[1;2H\x1b[2@", 0, 3, Pen{Fg: ANSIColor(1)}},
		{"DCH", "abcdef\x1b[44m\x1b[1;2H\x1b[2P", 0, 9, bg},
		{"line feed at the bottom", "\x1b[44m\x1b[3;1H\n", 2, 4, bg},
		{"IL", "a\r\nb\x1b[44m\x1b[1;1H\x1b[L", 0, 4, bg},
		{"DL", "a\r\nb\x1b[44m\x1b[1;1H\x1b[M", 2, 4, bg},
		{"SU", "\x1b[44m\x1b[S", 2, 0, bg},
		{"RI at the top", "\x1b[44m\x1bM", 0, 0, bg},
		{"default background erases to default", "\x1b[44mabc\x1b[49;1m\x1b[1;1H\x1b[K", 0, 1, Pen{}},
		{"DECALN", "\x1b[44m\x1b[2J\x1b#8", 1, 1, Pen{}},
	} {
		e := fed(t, 3, 10, tc.in)
		if _, got := e.Cell(tc.row, tc.col); got != tc.want {
			t.Errorf("%s: cell (%d,%d) %+v, want %+v", tc.name, tc.row, tc.col, got, tc.want)
		}
	}
}

// TestPenTableBound: a stream of ever new colours keeps the pen table
// bounded; the cells on the screen keep theirs.
func TestPenTableBound(t *testing.T) {
	old := maxPens
	maxPens = 64
	t.Cleanup(func() { maxPens = old })
	e := fed(t, 4, 10, "")
	for i := range 2000 {
		e.Feed(fmt.Appendf(nil, "\x1b[38;2;%d;%d;0mx", i%256, i/256))
	}
	if n := len(e.pens.pens); n > maxPens {
		t.Fatalf("%d pens, bound %d", n, maxPens)
	}
	for col := range 10 {
		i := 2000 - 10 + col
		if _, p := e.Cell(3, col); p.Fg != RGBColor(uint8(i%256), uint8(i/256), 0) {
			t.Errorf("cell (3,%d) %+v, want colour %d", col, p, i)
		}
	}
}

// TestModesView: the modes a viewer needs besides the keys.
func TestModesView(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Modes
	}{
		{"\x1b[?25l", Modes{CursorHidden: true}},
		{"\x1b[?1000h\x1b[?1002h", Modes{Mouse: 1002}},
		{"\x1b[?1003h\x1b[?1000l", Modes{}},
		{"\x1b[?9h", Modes{Mouse: 9}},
		{"\x1b[?1005h\x1b[?1006h", Modes{MouseEncoding: 1006}},
		{"\x1b[?1015h\x1b[?1015l", Modes{}},
		{"\x1b[?1004h", Modes{FocusEvents: true}},
		{"\x1b[?6h\x1b[?7l\x1b[4h\x1b[20h", Modes{Origin: true, NoAutowrap: true, Insert: true, NewLine: true}},
		{"\x1b[5 q", Modes{CursorStyle: 5}},
		{"\x1b[5 q\x1b[9 q", Modes{CursorStyle: 5}},
		{"\x1b[2 q\x1bc", Modes{}},
	} {
		if got := fed(t, 3, 10, tc.in).Modes(); got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
