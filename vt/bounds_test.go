package vt

import (
	"bytes"
	"slices"
	"testing"
)

// TestBoundedInput feeds floods that would grow a naive emulator without
// bound, in 4 KiB chunks, and holds it to checkFootprint's bound after
// every chunk; text after each flood still reads.
func TestBoundedInput(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name      string
		head, rep []byte
		tail      string
		want      string // the last transcript line
	}{
		{"unterminated OSC", []byte("\x1b]0;"), []byte("title"), "\x07after", "after"},
		{"OSC 10 query padded", []byte("\x1b]10;"), []byte("?;"), "\x07after", "after"},
		{"DCS", []byte("\x1bP$q"), []byte("payload"), "\x1b\\after", "after"},
		{"APC", []byte("\x1b_G"), []byte("AAAA"), "\x1b\\after", "after"},
		{"CSI parameters", []byte("\x1b["), []byte("123;"), "H\rafter", "after"},
		{"CSI intermediates", []byte("\x1b[1"), []byte("$"), "mafter", "after"},
		{"combining marks on one cell", []byte("e"), []byte("\u0301"), "\r\nafter", "after"},
		{"one endless line", nil, []byte("0123456789"), "\r\nafter", "after"},
		{"scroll region scrolls", []byte("\x1b[2;3r\x1b[3;1H"), []byte("line\r\n"), "\x1b[r\x1b[24Hafter", "after"},
		{"reverse index at the top", []byte("x"), []byte("\x1bM"), "\rafter", "after"},
		{"malformed UTF-8", nil, []byte("\xff\xc3"), "\r\nafter", "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Concat(tc.head, bytes.Repeat(tc.rep, 4*mb/len(tc.rep)), []byte(tc.tail))
			if raceEnabled {
				in = slices.Concat(tc.head, bytes.Repeat(tc.rep, mb/4/len(tc.rep)), []byte(tc.tail))
			}
			opts := Options{HistoryLines: 100, HistoryBytes: 64 << 10}
			e, err := New(24, 80, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(in); i += 4096 {
				e.Feed(in[i:min(i+4096, len(in))])
				checkFootprint(t, e, opts)
			}
			tr := e.Transcript(0)
			if last := tr.Tail[len(tr.Tail)-1]; last != tc.want {
				t.Errorf("last line %q, want %q", last, tc.want)
			}
			for _, l := range slices.Concat(tr.Final, tr.Tail) {
				checkText(t, "transcript", l)
			}
		})
	}
}
