package scrollback

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

// lines is a Source: final lines [first, first+len(held)).
type lines struct {
	first int64
	held  []string
}

func (l *lines) Retained() (int64, int64) { return l.first, l.first + int64(len(l.held)) }
func (l *lines) FinalLine(i int64) string { return l.held[i-l.first] }
func (l *lines) RetainedBytes() int {
	n := 0
	for _, s := range l.held {
		n += len(s)
	}
	return n
}

func view(first int64, final []string, tail ...string) View {
	return NewView(&lines{first: first, held: final}, tail, 1<<30, 1<<30)
}

// utf8Tail returns the longest suffix of s of at most n bytes that starts on
// a character boundary.
func utf8Tail(s string, n int) string {
	for i := max(0, len(s)-n); i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return ""
}

// page is the naive definition of Page: the lines as one list, joined,
// then cut.
func page(all []string, dropped bool, offset, count, limit int) messages.ReadResult {
	total := len(all)
	if offset >= total {
		return messages.ReadResult{TotalLines: total, LineBegin: offset, LineEnd: offset, Truncated: dropped}
	}
	end := total - offset
	begin := max(0, end-count)
	text := strings.Join(all[begin:end], "\n")
	first, truncated := begin, dropped
	if len(text) > limit {
		truncated = true
		cut := utf8Tail(text, limit)
		first = begin + strings.Count(text[:len(text)-len(cut)], "\n")
		if strings.HasPrefix(cut, "\n") {
			cut = cut[1:]
			first++
		}
		text = cut
	}
	return messages.ReadResult{Text: text, TotalLines: total, LineBegin: offset, LineEnd: offset + end - first, Truncated: truncated}
}

func TestPaging(t *testing.T) {
	v := view(0, []string{"l0", "l1", "l2", "l3"}, "dsh> ")
	tests := []struct {
		offset, count int
		want          messages.ReadResult
	}{
		{0, 500, messages.ReadResult{Text: "l0\nl1\nl2\nl3\ndsh> ", TotalLines: 5, LineEnd: 5}},
		{0, 1, messages.ReadResult{Text: "dsh> ", TotalLines: 5, LineEnd: 1}},
		{1, 2, messages.ReadResult{Text: "l2\nl3", TotalLines: 5, LineBegin: 1, LineEnd: 3}},
		{4, 1, messages.ReadResult{Text: "l0", TotalLines: 5, LineBegin: 4, LineEnd: 5}},
		{5, 1, messages.ReadResult{TotalLines: 5, LineBegin: 5, LineEnd: 5}},
		{0, int(^uint(0) >> 1), messages.ReadResult{Text: "l0\nl1\nl2\nl3\ndsh> ", TotalLines: 5, LineEnd: 5}},
	}
	for _, tc := range tests {
		if got := v.Page(tc.offset, tc.count, 1000); got != tc.want {
			t.Errorf("Page(%d, %d) = %+v, want %+v", tc.offset, tc.count, got, tc.want)
		}
	}
	// Nothing printed yet: no lines at all.
	v = view(0, nil, "")
	if got := v.Page(0, 10, 1000); got != (messages.ReadResult{}) {
		t.Errorf("empty transcript: %+v", got)
	}
	// A cut exactly on a line break leaves the break out.
	v = view(0, []string{"aaaa"}, "bbbb")
	if got, want := v.Page(0, 10, 5), (messages.ReadResult{Text: "bbbb", TotalLines: 2, LineEnd: 1, Truncated: true}); got != want {
		t.Errorf("%+v", got)
	}
	// Dropped lines make every page Truncated.
	v = view(3, []string{"d"}, "")
	if got, want := v.Page(0, 10, 100), (messages.ReadResult{Text: "d\n", TotalLines: 2, LineEnd: 2, Truncated: true}); got != want {
		t.Errorf("%+v", got)
	}
}

func TestPageAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"", "a", "bc", "é", "€🎉", "line", strings.Repeat("w", 40)}
	gen := func(n int) []string {
		var out []string
		for range n {
			out = append(out, pieces[rng.IntN(len(pieces))]+pieces[rng.IntN(len(pieces))])
		}
		return out
	}
	for range 3000 {
		first := int64(rng.IntN(3))
		final, tail := gen(rng.IntN(8)), gen(1+rng.IntN(4))
		v := view(first, final, tail...)
		all := append(append([]string{}, final...), tail...)
		if first == 0 && len(final) == 0 && len(tail) == 1 && tail[0] == "" {
			all = nil
		}
		limit := 1 + rng.IntN(60)
		for range 4 {
			offset, count := rng.IntN(len(all)+3), 1+rng.IntN(len(all)+3)
			if got, want := v.Page(offset, count, limit), page(all, first > 0, offset, count, limit); got != want {
				t.Fatalf("lines %q (first %d), Page(%d, %d, %d) = %+v, want %+v", all, first, offset, count, limit, got, want)
			}
		}
	}
}

func TestSinceBasics(t *testing.T) {
	v := view(0, []string{"a", "b"}, "c")
	if r := v.Since(0, 1000); r.Text != "a\nb\nc" || r.Cursor != 2 || r.More || r.Truncated {
		t.Fatalf("Since(0) %+v", r)
	}
	// The tail is re-sent until it is final.
	if r := v.Since(2, 1000); r.Text != "c" || r.Cursor != 2 {
		t.Fatalf("Since(2) %+v", r)
	}
	// A cursor from the future reads nothing new.
	if r := v.Since(99, 1000); r.Text != "c" || r.Cursor != 2 {
		t.Fatalf("Since(99) %+v", r)
	}
	// Dropped lines are reported omitted.
	v = view(4, []string{"line 4", "line 5"}, "")
	if r := v.Since(0, 1000); r.OmittedFrom != 0 || r.OmittedTo != 4 || !r.Truncated || r.Text != "line 4\nline 5\n" || r.Cursor != 6 {
		t.Fatalf("%+v", r)
	}
	// A page that fills stops at a line break; the cursor stays before the
	// first line not shown.
	v = view(0, []string{"aaa", "bbb", "ccc"}, "$ ")
	if r := v.Since(0, 9); r.Text != "aaa\nbbb\n" || r.Cursor != 2 || !r.More {
		t.Fatalf("%+v", r)
	}
	// One line longer than a page: its head, counted as shown.
	v = view(0, []string{"0123456789"}, "$ ")
	if r := v.Since(0, 5); r.Text != "0123\n" || r.Cursor != 1 || !r.More || !r.Truncated {
		t.Fatalf("%+v", r)
	}
	// A tail longer than a page on its own: its end.
	v = view(0, nil, "0123456789", "$ ")
	if r := v.Since(0, 5); r.Text != "89\n$ " || r.Cursor != 0 || r.More || !r.Truncated {
		t.Fatalf("%+v", r)
	}
}

// Reading on from each returned cursor shows every final line once, in
// order, or reports it omitted, then ends with the tail, whatever the page
// size and the bounds.
func TestSinceShowsEveryLineOnce(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := rng.IntN(40)
		var all []string
		for i := range n {
			all = append(all, fmt.Sprintf("%d:%s", i, strings.Repeat("x", rng.IntN(30))))
		}
		first := int64(rng.IntN(n + 1))
		v := view(first, all[first:], "t1", "$ ")
		limit := 8 + rng.IntN(120)
		var cursor uint64
		var got []string
		omitted := 0
		for reads := 0; ; reads++ {
			if reads > 2*n+2 {
				t.Fatalf("seed %d: no end after %d reads", seed, reads)
			}
			r := v.Since(cursor, limit)
			if len(r.Text) > limit+1 || r.Cursor < cursor {
				t.Fatalf("seed %d: %+v from %d", seed, r, cursor)
			}
			omitted += int(r.OmittedTo - r.OmittedFrom)
			text := r.Text
			if !r.More {
				if !strings.HasSuffix(text, "$ ") {
					t.Fatalf("seed %d: the last read %q does not end with the tail", seed, text)
				}
				text = strings.TrimSuffix(strings.TrimSuffix(text, "$ "), "t1\n")
			}
			for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				if l != "" {
					got = append(got, l)
				}
			}
			cursor = r.Cursor
			if !r.More {
				break
			}
		}
		if omitted != int(first) || len(got) != n-int(first) {
			t.Fatalf("seed %d: %d omitted, %d shown of %d lines (first %d, limit %d)", seed, omitted, len(got), n, first, limit)
		}
		for i, l := range got {
			if want := all[int(first)+i]; !strings.HasPrefix(want, l) {
				t.Fatalf("seed %d: line %q, want %q", seed, l, want)
			}
		}
	}
}

func TestNewest(t *testing.T) {
	v := view(0, []string{"$ echo hi", "hi"}, "$ ")
	cut := func(i int64, l string) string {
		if i == 0 {
			return strings.TrimPrefix(l, "$ ")
		}
		return l
	}
	if text, shown, c := v.Newest(0, 3, 100, cut); text != "echo hi\nhi\n$ " || shown != 0 || c {
		t.Fatalf("%q %d %v", text, shown, c)
	}
	if text, shown, c := v.Newest(0, 3, 6, cut); text != "hi\n$ " || shown != 1 || !c {
		t.Fatalf("%q %d %v", text, shown, c)
	}
	if text, shown, c := v.Newest(0, 3, 3, nil); text != "$ " || shown != 2 || !c {
		t.Fatalf("%q %d %v", text, shown, c)
	}
}

// The bounds hold for the whole transcript, tail included: the oldest
// lines go first, then the front of a line too long alone.
func TestViewBounds(t *testing.T) {
	src := &lines{held: []string{"aa", "bb", "cc"}}
	v := NewView(src, []string{"dd", "$ "}, 3, 1000)
	if p := v.Page(0, 10, 1000); p.Text != "cc\ndd\n$ " || p.TotalLines != 3 || !p.Truncated {
		t.Fatalf("lines bound: %+v", p)
	}
	if r := v.Since(0, 1000); r.OmittedFrom != 0 || r.OmittedTo != 2 || r.Text != "cc\ndd\n$ " || r.Cursor != 3 {
		t.Fatalf("lines bound, cursor read: %+v", r)
	}
	v = NewView(src, []string{"dd", "$ "}, 100, 8) // "cc\ndd\n$ " is 8 bytes
	if p := v.Page(0, 10, 1000); p.Text != "cc\ndd\n$ " || p.TotalLines != 3 {
		t.Fatalf("bytes bound: %+v", p)
	}
	v = NewView(src, []string{"0123456789"}, 100, 4)
	if p := v.Page(0, 10, 1000); p.Text != "6789" || p.TotalLines != 1 || !p.Truncated {
		t.Fatalf("one line over the bytes bound: %+v", p)
	}
	if r := v.Since(0, 1000); r.Text != "6789" || r.OmittedTo != 3 || !r.Truncated {
		t.Fatalf("one line over the bytes bound, cursor read: %+v", r)
	}
	// The cut falls inside a final line: its end stays.
	v = NewView(&lines{held: []string{"abcd", "efgh"}}, []string{"$ "}, 100, 9)
	if p := v.Page(0, 10, 1000); p.Text != "d\nefgh\n$ " || p.TotalLines != 3 || !p.Truncated {
		t.Fatalf("cut inside a line: %+v", p)
	}
	if r := v.Since(0, 1000); r.Text != "d\nefgh\n$ " || r.Cursor != 2 || !r.Truncated {
		t.Fatalf("cut inside a line, cursor read: %+v", r)
	}
	// The tail itself longer than the line bound.
	v = NewView(&lines{}, []string{"a", "b", "c"}, 2, 1000)
	if p := v.Page(0, 10, 1000); p.Text != "b\nc" || p.TotalLines != 2 {
		t.Fatalf("tail over the lines bound: %+v", p)
	}
	if r := v.Since(0, 1000); r.Text != "b\nc" || r.Cursor != 0 || r.OmittedTo != 0 {
		t.Fatalf("tail over the lines bound, cursor read: %+v", r)
	}
}
