package vt

import (
	"errors"
	"slices"
	"testing"
)

func TestSizeBounds(t *testing.T) {
	for _, sz := range []Size{{0, 80}, {24, 1}, {MaxRows + 1, 80}, {24, MaxCols + 1}, {-1, -1}} {
		_, err := New(sz.Rows, sz.Cols, Options{})
		var se *SizeError
		if !errors.Is(err, ErrSize) || !errors.As(err, &se) || se.Rows != sz.Rows || se.Cols != sz.Cols {
			t.Errorf("New(%d, %d) = %v, want a *SizeError matching ErrSize", sz.Rows, sz.Cols, err)
		}
	}
	e, err := New(MinRows, MinCols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte("abc中"))
	if err := e.Resize(MaxRows, MaxCols); err != nil {
		t.Fatal(err)
	}
	before := e.Screen()
	if err := e.Resize(MaxRows+1, 80); !errors.Is(err, ErrSize) {
		t.Errorf("Resize out of range = %v", err)
	}
	if after := e.Screen(); after.Hash != before.Hash || after.Size != before.Size {
		t.Errorf("a refused Resize changed the screen")
	}
}

// resized feeds in at rows × cols, resizes, feeds more, and returns the
// screen and whole transcript.
func resized(t *testing.T, rows, cols int, in string, to Size, more string) (Screen, []string) {
	t.Helper()
	e, err := New(rows, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte(in))
	if err := e.Resize(to.Rows, to.Cols); err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte(more))
	tr := e.Transcript(0)
	s := e.Screen()
	if s.Size != to || len(s.Rows) != to.Rows {
		t.Fatalf("size %+v with %d rows, want %+v", s.Size, len(s.Rows), to)
	}
	return s, append(tr.Final, tr.Tail...)
}

func TestResize(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, cols int
		in         string
		to         Size
		more       string
		screen     []string
		cursor     [2]int
		transcript []string
	}{
		{"wider joins a wrapped line", 3, 10, "0123456789abcde", Size{3, 20}, "!",
			[]string{"0123456789abcde!", "", ""}, [2]int{0, 16}, []string{"0123456789abcde!"}},
		{"narrower wraps it again", 3, 20, "hello world", Size{3, 5}, "!",
			[]string{"hello", " worl", "d!"}, [2]int{2, 2}, []string{"hello world!"}},
		{"shorter pushes rows above the cursor into history", 3, 10, "a\r\nb\r\nc", Size{2, 10}, "",
			[]string{"b", "c"}, [2]int{1, 1}, []string{"a", "b", "c"}},
		{"taller adds rows below, history stays", 2, 10, "a\r\nb\r\nc", Size{4, 10}, "\r\nd",
			[]string{"b", "c", "d", ""}, [2]int{2, 1}, []string{"a", "b", "c", "d"}},
		{"cursor above text stays visible, rows below that do not fit go", 4, 10, "a\r\nb\r\nc\r\nd\x1b[2;1H",
			Size{2, 10}, "X", []string{"X", "c"}, [2]int{0, 1}, []string{"a", "X", "c"}},
		{"wide characters rewrap whole", 3, 6, "ab中文字", Size{3, 5}, "",
			[]string{"ab中", "文字"}, [2]int{1, 4}, []string{"ab中文字"}},
		{"scroll region resets", 4, 10, "\x1b[2;3r\x1b[4;1Hx", Size{3, 10}, "\r\ny\r\nz",
			[]string{"x", "y", "z"}, [2]int{2, 1}, []string{"", "", "", "x", "y", "z"}},
		{"alternate screen is cut, main screen rewrapped", 3, 10, "0123456789ab\x1b[?1049h\x1b[Hfull screen\x1b[3;1Hstatus",
			Size{3, 6}, "",
			[]string{"full s", "n", "status"}, [2]int{2, 5}, []string{"0123456789ab"}},
		{"after the alternate screen", 3, 10, "0123456789ab\x1b[?1049hfull\x1b[?1049l", Size{3, 6}, "!",
			[]string{"012345", "6789ab", "!"}, [2]int{2, 1}, []string{"0123456789ab!"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tr := resized(t, tc.rows, tc.cols, tc.in, tc.to, tc.more)
			rows := slices.Clone(s.Rows)
			if want := append(slices.Clone(tc.screen), make([]string, tc.to.Rows-len(tc.screen))...); !slices.Equal(rows, want) {
				t.Errorf("screen %q, want %q", rows, want)
			}
			if got := [2]int{s.CursorRow, s.CursorCol}; got != tc.cursor {
				t.Errorf("cursor %v, want %v", got, tc.cursor)
			}
			if !slices.Equal(trimEmpty(tr), tc.transcript) {
				t.Errorf("transcript %q, want %q", tr, tc.transcript)
			}
		})
	}
}

// TestResizeTabs: tab stops set before a resize stay, new columns get the
// default stops.
func TestResizeTabs(t *testing.T) {
	e, _ := New(3, 10, Options{})
	e.Feed([]byte("\x1b[3g\x1b[4G\x1bH\r"))
	if err := e.Resize(3, 30); err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte("\ta\tb\tc"))
	if got := e.Screen().Rows[0]; got != "   a            b       c" {
		t.Errorf("row %q", got)
	}
}
