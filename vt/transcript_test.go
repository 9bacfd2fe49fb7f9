package vt

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// transcriptCases are the golden cases of the transcript: what an agent
// reads is what a terminal shows.
var transcriptCases = []struct {
	name       string
	rows, cols int
	in         string
	want       []string // final lines, then the tail
}{
	{"plain", 5, 20, "hello\r\nworld\r\n", []string{"hello", "world", ""}},
	{"cr overwrites", 5, 20, "progress 20%\rprogress 40%\rprogress 100%\r\ndone\r\n",
		[]string{"progress 100%", "done", ""}},
	{"cr shorter text keeps the rest", 5, 20, "abcdef\rxy\r\n", []string{"xycdef", ""}},
	{"bs moves back", 5, 20, "abc\bX\r\n", []string{"abX", ""}},
	{"overstrike", 5, 20, "N\bNA\bAM\bME\bE\r\n_\bf_\bo_\bo\r\n", []string{"NAME", "foo", ""}},
	{"overstrike at the right edge", 5, 4, "abcN\bN\r\n", []string{"abcN", ""}},
	{"erase to end of line", 5, 20, "hello world\r\x1b[Kbye\r\n", []string{"bye", ""}},
	{"erase after a move back", 5, 20, "abcdef\x1b[3D\x1b[K!\r\n", []string{"abc!", ""}},
	{"erase whole line", 5, 20, "junk\x1b[2K\rclean\r\n", []string{"clean", ""}},
	{"erase chars", 5, 20, "abcdef\r\x1b[2Xz\r\n", []string{"z cdef", ""}},
	{"wrapped line is one line", 3, 10, "0123456789abcdefghijXYZ\r\nnext\r\n",
		[]string{"0123456789abcdefghijXYZ", "next", ""}},
	{"wrapped line split across history and screen", 2, 5, "aaaaabbbbbccccc\r\nd",
		[]string{"aaaaabbbbbccccc", "d"}},
	{"wrapped line exactly full", 3, 5, "abcde\r\nf\r\n", []string{"abcde", "f", ""}},
	{"tabs", 5, 20, "a\tb\r\nabcdefgh\tc\r\n", []string{"a       b", "abcdefgh        c", ""}},
	{"clear screen keeps the lines", 5, 20, "one\r\ntwo\r\n\x1b[H\x1b[2Jthree", []string{"one", "two", "three"}},
	{"clear with ED 3 keeps history", 2, 20, "one\r\ntwo\r\nthree\r\n\x1b[H\x1b[2J\x1b[3Jfour",
		[]string{"one", "two", "three", "four"}},
	{"alternate screen stays out", 5, 20, "before\r\n\x1b[?1049h\x1b[HFULL SCREEN\r\n\x1b[?1049lafter\r\n",
		[]string{"before", "after", ""}},
	{"wide characters", 5, 10, "中文 ok\r\n", []string{"中文 ok", ""}},
	{"malformed utf-8", 5, 10, "a\xffb\xe4\xb8\r\n", []string{"a\ufffdb\ufffd\ufffd", ""}},
	{"controls and sequences vanish", 5, 20, "a\x07b\x00c\x1b]0;title\x07d\x1bP1$r\x1b\\e\x1b[31mf\x1b[0m\r\n",
		[]string{"abcdef", ""}},
	{"trailing spaces trimmed", 5, 20, "abc   \r\n", []string{"abc", ""}},
	{"multi-line progress", 6, 30, multiProgress(5), []string{
		"installing", "item 1: 100%", "item 2: 100%", "item 3: 100%", "done", ""}},
	{"multi-line progress with its first line in history", 4, 30, multiProgress(5), []string{
		"installing", "item 1: 100%", "item 2: 100%", "item 3: 100%", "done", ""}},
}

// multiProgress draws a three-line progress display redrawn steps times
// with cursor up, as pip, docker and cargo do.
func multiProgress(steps int) string {
	var b strings.Builder
	b.WriteString("installing\r\n")
	for s := 1; s <= steps; s++ {
		if s > 1 {
			b.WriteString("\x1b[3A")
		}
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(&b, "\r\x1b[Kitem %d: %d%%\r\n", i, s*100/steps)
		}
	}
	b.WriteString("done\r\n")
	return b.String()
}

func TestTranscript(t *testing.T) {
	for _, tc := range transcriptCases {
		t.Run(tc.name, func(t *testing.T) {
			got := checkChunking(t, tc.rows, tc.cols, Options{}, []byte(tc.in))
			if !slices.Equal(got.lines(), tc.want) {
				t.Errorf("transcript\n got %q\nwant %q", got.lines(), tc.want)
			}
		})
	}
}

// TestTranscriptIncremental reads the transcript as a client does: new
// final lines since its cursor, then the tail.
func TestTranscriptIncremental(t *testing.T) {
	e, err := New(3, 10, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var final []string
	var next int64
	for i := range 20 {
		e.Feed(fmt.Appendf(nil, "line %d\r\n", i))
		tr := e.Transcript(next)
		if tr.First != next {
			t.Fatalf("First = %d, want %d", tr.First, next)
		}
		final = append(final, tr.Final...)
		next = tr.Next
		if next != e.FinalLines() {
			t.Fatalf("Next = %d, FinalLines = %d", next, e.FinalLines())
		}
	}
	tr := e.Transcript(next)
	all := append(final, tr.Tail...)
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("line %d", i))
	}
	want = append(want, "")
	if !slices.Equal(all, want) {
		t.Errorf("got %q\nwant %q", all, want)
	}
}

// TestHistoryBounds: the history keeps at most the configured lines and
// bytes, reports what it dropped through First, and cuts an endless line.
func TestHistoryBounds(t *testing.T) {
	e, _ := New(2, 10, Options{HistoryLines: 5, HistoryBytes: 1000})
	for i := range 100 {
		e.Feed(fmt.Appendf(nil, "%d\r\n", i))
	}
	tr := e.Transcript(0)
	if tr.First != 94 || tr.Next != 99 || !slices.Equal(tr.Final, []string{"94", "95", "96", "97", "98"}) {
		t.Errorf("lines bound: %+v", tr)
	}

	e, _ = New(2, 10, Options{HistoryBytes: 100})
	e.Feed([]byte(strings.Repeat("x", 10000)))
	tr = e.Transcript(0)
	total := 0
	for _, l := range tr.Final {
		total += len(l)
		if len(l) > 100 {
			t.Errorf("final line of %d bytes, bound 100", len(l))
		}
	}
	if total > 100 || len(e.hist.partial) > 100 {
		t.Errorf("history holds %d bytes (+%d partial), bound 100", total, len(e.hist.partial))
	}
	if len(e.hist.buf) > 400 || cap(e.hist.partial) > 400 {
		t.Errorf("history arrays grew to %d and %d bytes", cap(e.hist.buf), cap(e.hist.partial))
	}

	// An endless line is cut into final lines of exactly the bound, with
	// nothing lost between them (rows of 7 cells do not divide 100); the
	// history keeps only the newest, as its bytes are bounded too.
	e, _ = New(2, 7, Options{HistoryBytes: 100})
	line := strings.Repeat("0123456789", 100)
	e.Feed([]byte(line + "\r\nend"))
	tr = e.Transcript(0)
	if len(tr.Final) != 1 || len(tr.Final[0]) != 100 || len(tr.Tail) != 2 || tr.Tail[1] != "end" {
		t.Fatalf("transcript %+v", tr)
	}
	if n := int(tr.Next)*100 + len(tr.Tail[0]); n != len(line) || !strings.HasSuffix(line, tr.Tail[0]) {
		t.Errorf("%d final pieces of 100 bytes and a tail of %d bytes do not make the line of %d",
			tr.Next, len(tr.Tail[0]), len(line))
	}
}
