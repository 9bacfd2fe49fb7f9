package vt

import (
	"slices"
	"strings"
	"testing"
)

func TestCursorLine(t *testing.T) {
	cases := []struct {
		name       string
		rows, cols int
		in         string
		index      int
		before     string
	}{
		{"empty", 3, 10, "", 0, ""},
		{"prompt keeps its blank", 3, 10, "$ ", 0, "$ "},
		{"second line", 3, 10, "one\r\n$ ", 1, "$ "},
		{"cursor moved back", 3, 10, "abcdef\x1b[3D", 0, "abc"},
		{"cursor moved right over nothing", 3, 10, "ab\x1b[3C", 0, "ab   "},
		{"wrapped line", 3, 5, "abcdefg", 0, "abcdefg"},
		{"pending wrap", 3, 5, "abcde", 0, "abcde"},
		{"wrapped line begun in history", 2, 5, "x\r\naaaaabbbbbccc", 0, "aaaaabbbbbccc"},
		{"after the history", 2, 10, "a\r\nb\r\nc\r\n$ ", 1, "$ "},
		{"wide characters", 3, 10, "中文x", 0, "中文x"},
		{"alternate screen", 3, 10, "$ vim\r\n\x1b[?1049h\x1b[Hfull", 1, ""},
		{"alternate screen from the prompt line", 3, 20, "$ vim\x1b[?1049h\x1b[Hfull", 0, "$ vim"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.rows, tc.cols, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e.Feed([]byte(tc.in))
			index, before := e.CursorLine()
			if index != tc.index || before != tc.before {
				t.Errorf("CursorLine = %d %q, want %d %q", index, before, tc.index, tc.before)
			}
		})
	}
}

// TestCursorLineAgrees checks CursorLine against Transcript after every
// byte of every golden and oracle case: its index names a line of the
// tail, and its text and that line agree up to the shorter of the two
// (the tail's lines are trimmed; the text before the cursor is not).
// Retained, RetainedBytes and FinalLine read the same final lines as
// Transcript, and TailFrom the same tail.
func TestCursorLineAgrees(t *testing.T) {
	var inputs []struct {
		rows, cols int
		in         string
	}
	for _, tc := range transcriptCases {
		inputs = append(inputs, struct {
			rows, cols int
			in         string
		}{tc.rows, tc.cols, tc.in})
	}
	for _, tc := range oracleCases {
		inputs = append(inputs, struct {
			rows, cols int
			in         string
		}{tc.rows, tc.cols, tc.in})
	}
	for _, in := range inputs {
		e, err := New(in.rows, in.cols, Options{HistoryLines: 7, HistoryBytes: 200})
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(in.in) {
			e.Feed([]byte{in.in[i]})
			tr := e.Transcript(0)
			index, before := e.CursorLine()
			if index < 0 || index >= len(tr.Tail) {
				t.Fatalf("%q[:%d]: index %d, tail %q", in.in, i+1, index, tr.Tail)
			}
			if l := tr.Tail[index]; !strings.HasPrefix(before, l) && !strings.HasPrefix(l, before) {
				t.Fatalf("%q[:%d]: before the cursor %q, its line %q", in.in, i+1, before, l)
			}
			for from := range len(tr.Tail) + 2 {
				lines, n := e.TailFrom(from)
				if n != len(tr.Tail) || !slices.Equal(lines, tr.Tail[min(from, n):]) {
					t.Fatalf("TailFrom(%d) = %q, %d; Tail %q", from, lines, n, tr.Tail)
				}
			}
			first, next := e.Retained()
			if first != tr.First || next != tr.Next {
				t.Fatalf("Retained = %d, %d; Transcript %d, %d", first, next, tr.First, tr.Next)
			}
			for k, l := range tr.Final {
				if got := e.FinalLine(first + int64(k)); got != l {
					t.Fatalf("FinalLine(%d) = %q, want %q", first+int64(k), got, l)
				}
			}
			n := 0
			for _, l := range tr.Final {
				n += len(l)
			}
			if got := e.RetainedBytes(); got != n {
				t.Fatalf("RetainedBytes = %d, the final lines hold %d", got, n)
			}
			if e.FinalLine(first-1) != "" || e.FinalLine(next) != "" {
				t.Fatal("FinalLine outside the retained lines")
			}
		}
	}
}
