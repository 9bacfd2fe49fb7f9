package scrollback

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

// model is the naive definition of Buffer: the retained text as one string,
// re-split on every write.
type model struct {
	maxLines, maxBytes, maxPage int
	s                           string
	dropped                     bool
}

func (m *model) write(text string) {
	m.s += text
	if lines := m.lines(); len(lines) > m.maxLines {
		m.s = strings.Join(lines[len(lines)-m.maxLines:], "\n")
		m.dropped = true
	}
	if len(m.s) > m.maxBytes {
		m.s = utf8Tail(m.s, m.maxBytes)
		m.dropped = true
	}
}

func (m *model) lines() []string {
	if m.s == "" {
		return nil
	}
	return strings.Split(m.s, "\n")
}

// utf8Tail returns the longest suffix of s of at most n bytes that starts on a
// character boundary.
func utf8Tail(s string, n int) string {
	for i := max(0, len(s)-n); i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return ""
}

func (m *model) page(offset, count int) messages.ReadResult {
	lines := m.lines()
	total := len(lines)
	if offset >= total {
		return messages.ReadResult{TotalLines: total, LineBegin: offset, LineEnd: offset, Truncated: m.dropped}
	}
	end := total - offset
	begin := max(0, end-count)
	text := strings.Join(lines[begin:end], "\n")
	first, truncated := begin, m.dropped
	if len(text) > m.maxPage {
		truncated = true
		cut := utf8Tail(text, m.maxPage)
		skipped := text[:len(text)-len(cut)]
		first = begin + strings.Count(skipped, "\n")
		if strings.HasPrefix(cut, "\n") {
			// The cut fell on a line break: that line shows nothing.
			cut = cut[1:]
			first++
		}
		text = cut
	}
	return messages.ReadResult{Text: text, TotalLines: total, LineBegin: offset, LineEnd: offset + end - first, Truncated: truncated}
}

func writeAll(b *Buffer, parts ...string) {
	for _, p := range parts {
		b.Write([]byte(p))
	}
}

func TestLineBound(t *testing.T) {
	b := New(3, 1<<20, 1<<20)
	writeAll(b, "one\ntwo\nthree\n")
	if got := b.TotalLines(); got != 3 {
		t.Fatalf("TotalLines = %d, want 3 (two, three and the empty last line)", got)
	}
	if !b.Dropped() {
		t.Fatal("dropping line one must set Dropped")
	}
	if got := b.Page(0, 10).Text; got != "two\nthree\n" {
		t.Fatalf("text %q", got)
	}
	writeAll(b, "four")
	if got := b.Page(0, 10).Text; got != "two\nthree\nfour" {
		t.Fatalf("text %q", got)
	}
	if b.Bytes() != len("two\nthree\nfour") {
		t.Fatalf("Bytes = %d", b.Bytes())
	}
}

func TestSingleLineBound(t *testing.T) {
	b := New(1, 100, 100)
	writeAll(b, "a\n")
	if got := b.TotalLines(); got != 0 {
		t.Fatalf("keeping the single empty line after \"a\\n\" retains \"\": TotalLines = %d", got)
	}
	writeAll(b, "b")
	if got := b.Page(0, 5); got.Text != "b" || got.TotalLines != 1 || got.LineEnd != 1 || !got.Truncated {
		t.Fatalf("%+v", got)
	}
	writeAll(b, "c\nd\ne")
	if got := b.Page(0, 5).Text; got != "e" {
		t.Fatalf("text %q", got)
	}
}

func TestByteBound(t *testing.T) {
	b := New(100, 10, 100)
	writeAll(b, "0123\n", "4567\n")
	if b.Dropped() || b.Bytes() != 10 {
		t.Fatalf("exactly at the bound: dropped=%v bytes=%d", b.Dropped(), b.Bytes())
	}
	writeAll(b, "89")
	if !b.Dropped() || b.Bytes() != 10 {
		t.Fatalf("over the bound: dropped=%v bytes=%d", b.Dropped(), b.Bytes())
	}
	got := b.Page(0, 100)
	if got.Text != "23\n4567\n89" || got.TotalLines != 3 || got.LineEnd != 3 || !got.Truncated {
		t.Fatalf("%+v", got)
	}
}

func TestHugeSingleLine(t *testing.T) {
	b := New(10, 1000, 1<<20)
	writeAll(b, "old line\n")
	huge := strings.Repeat("0123456789", 100_000) // 1 MB, no newline
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			if chunked {
				for i := 0; i < len(huge); i += 4096 {
					b.Write([]byte(huge[i:min(i+4096, len(huge))]))
				}
			} else {
				b.Write([]byte(huge))
			}
			if b.Bytes() != 1000 || b.TotalLines() != 1 || !b.Dropped() {
				t.Fatalf("bytes=%d lines=%d dropped=%v", b.Bytes(), b.TotalLines(), b.Dropped())
			}
			if got := b.Page(0, 1).Text; got != huge[len(huge)-1000:] {
				t.Fatalf("kept the wrong 1000 bytes: %q...", got[:20])
			}
			if c := cap(b.w.buf); c > 2*1000 {
				t.Fatalf("window array of %d bytes for a 1000-byte bound", c)
			}
		})
	}
}

func TestUTF8Boundary(t *testing.T) {
	// "€" is 3 bytes, "🎉" 4. A bound that falls inside a character keeps
	// less, never a broken character.
	for limit := 1; limit <= 12; limit++ {
		b := New(100, limit, 100)
		writeAll(b, "x€🎉€", "🎉")
		got := b.Page(0, 1).Text
		if !utf8.ValidString(got) || len(got) > limit {
			t.Fatalf("limit %d: %q", limit, got)
		}
		if want := utf8Tail("x€🎉€🎉", limit); got != want {
			t.Fatalf("limit %d: got %q, want %q", limit, got, want)
		}
	}
	// The page bound cuts on a boundary too.
	for page := 1; page <= 12; page++ {
		b := New(100, 100, page)
		writeAll(b, "€🎉\n🎉€")
		got := b.Page(0, 10)
		if !utf8.ValidString(got.Text) || len(got.Text) > page || !got.Truncated {
			t.Fatalf("page %d: %+v", page, got)
		}
	}
}

func TestPaging(t *testing.T) {
	b := New(100, 1000, 1000)
	if got := b.Page(0, 10); got != (messages.ReadResult{}) {
		t.Fatalf("empty buffer: %+v", got)
	}
	if got := b.Page(5, 10); got != (messages.ReadResult{LineBegin: 5, LineEnd: 5}) {
		t.Fatalf("empty buffer, offset 5: %+v", got)
	}
	writeAll(b, "l0\nl1\nl2\nl3\ndsh> ")
	tests := []struct {
		offset, count int
		want          messages.ReadResult
	}{
		{0, 500, messages.ReadResult{Text: "l0\nl1\nl2\nl3\ndsh> ", TotalLines: 5, LineBegin: 0, LineEnd: 5}},
		{0, 1, messages.ReadResult{Text: "dsh> ", TotalLines: 5, LineBegin: 0, LineEnd: 1}},
		{1, 2, messages.ReadResult{Text: "l2\nl3", TotalLines: 5, LineBegin: 1, LineEnd: 3}},
		{3, 2, messages.ReadResult{Text: "l0\nl1", TotalLines: 5, LineBegin: 3, LineEnd: 5}},
		{3, 10, messages.ReadResult{Text: "l0\nl1", TotalLines: 5, LineBegin: 3, LineEnd: 5}},
		{4, 1, messages.ReadResult{Text: "l0", TotalLines: 5, LineBegin: 4, LineEnd: 5}}, // offset = total-1
		{5, 1, messages.ReadResult{TotalLines: 5, LineBegin: 5, LineEnd: 5}},             // offset = total
		{99, 1, messages.ReadResult{TotalLines: 5, LineBegin: 99, LineEnd: 99}},
		{0, int(^uint(0) >> 1), messages.ReadResult{Text: "l0\nl1\nl2\nl3\ndsh> ", TotalLines: 5, LineEnd: 5}},
	}
	for _, tc := range tests {
		if got := b.Page(tc.offset, tc.count); got != tc.want {
			t.Errorf("Page(%d, %d) = %+v, want %+v", tc.offset, tc.count, got, tc.want)
		}
	}
}

func TestPagingTrailingNewline(t *testing.T) {
	b := New(100, 1000, 1000)
	writeAll(b, "a\nb\n")
	if got, want := b.Page(0, 1), (messages.ReadResult{Text: "", TotalLines: 3, LineEnd: 1}); got != want {
		t.Fatalf("the empty last line is a line: %+v", got)
	}
	if got, want := b.Page(0, 2), (messages.ReadResult{Text: "b\n", TotalLines: 3, LineEnd: 2}); got != want {
		t.Fatalf("%+v", got)
	}
	b = New(100, 1000, 1000)
	writeAll(b, "\n")
	if got, want := b.Page(0, 10), (messages.ReadResult{Text: "\n", TotalLines: 2, LineEnd: 2}); got != want {
		t.Fatalf("a lone newline is two empty lines: %+v", got)
	}
}

func TestPageCut(t *testing.T) {
	b := New(100, 1000, 6)
	writeAll(b, "aaaa\nbbbb\ncc")
	// Page "aaaa\nbbbb\ncc" (12 bytes) cut to its last 6: "bbb\ncc". Line
	// "bbbb" is partly returned and counts.
	if got, want := b.Page(0, 10), (messages.ReadResult{Text: "bbb\ncc", TotalLines: 3, LineEnd: 2, Truncated: true}); got != want {
		t.Fatalf("%+v", got)
	}
	// A cut exactly on a line break leaves the break and the empty remnant out.
	b = New(100, 1000, 5)
	writeAll(b, "aaaa\nbbbb")
	if got, want := b.Page(0, 10), (messages.ReadResult{Text: "bbbb", TotalLines: 2, LineEnd: 1, Truncated: true}); got != want {
		t.Fatalf("%+v", got)
	}
	// The next page resumes where LineEnd says.
	if got, want := b.Page(1, 10), (messages.ReadResult{Text: "aaaa", TotalLines: 2, LineBegin: 1, LineEnd: 2}); got != want {
		t.Fatalf("%+v", got)
	}
	// A cut landing on the last line's break keeps just the empty last line.
	b = New(100, 1000, 1)
	writeAll(b, "abc\n")
	if got, want := b.Page(0, 10), (messages.ReadResult{Text: "", TotalLines: 2, LineEnd: 1, Truncated: true}); got != want {
		t.Fatalf("%+v", got)
	}
}

func TestDroppedIsSticky(t *testing.T) {
	b := New(2, 1000, 1000)
	writeAll(b, "a\nb")
	if b.Dropped() || b.Page(0, 10).Truncated {
		t.Fatal("nothing dropped yet")
	}
	writeAll(b, "\nc")
	if !b.Dropped() {
		t.Fatal("line a was dropped")
	}
	for i := 0; i < 3; i++ {
		if !b.Page(0, 1).Truncated || !b.Page(10, 1).Truncated {
			t.Fatal("every later page must report the lost history")
		}
	}
}

func TestLazyAllocation(t *testing.T) {
	var b *Buffer
	allocs := testing.AllocsPerRun(100, func() { b = New(10000, 4<<20, 256<<10) })
	if allocs != 1 {
		t.Errorf("New made %v allocations, want just the Buffer", allocs)
	}
	if cap(b.w.buf) != 0 || len(b.breaks.a) != 0 {
		t.Fatalf("a new Buffer holds arrays: %d bytes, %d breaks", cap(b.w.buf), len(b.breaks.a))
	}
	if got := b.Page(0, 10); got != (messages.ReadResult{}) {
		t.Fatalf("%+v", got)
	}
	writeAll(b, "hello\nworld\n")
	if cap(b.w.buf) > 1024 || len(b.breaks.a) > 16 {
		t.Fatalf("a small write grew the arrays to %d bytes, %d breaks", cap(b.w.buf), len(b.breaks.a))
	}
}

// raceEnabled is set by race_test.go.
var raceEnabled bool

// TestFloodIsBounded writes a large flood of short lines (the shape of
// `seq 1 N`) and checks that memory stays within the documented bound and
// the tail is exact.
func TestFloodIsBounded(t *testing.T) {
	size := 200 << 20
	if testing.Short() || raceEnabled {
		size = 16 << 20
	}
	const maxLines, maxBytes = 10000, 4 << 20
	b := New(maxLines, maxBytes, 256<<10)
	chunk := floodChunk(4096)
	for n := 0; n < size; n += len(chunk) {
		b.Write(chunk)
		if c := cap(b.w.buf); c > 2*maxBytes {
			t.Fatalf("window grew to %d bytes", c)
		}
	}
	if b.TotalLines() != maxLines || !b.Dropped() {
		t.Fatalf("lines=%d dropped=%v", b.TotalLines(), b.Dropped())
	}
	if c := len(b.breaks.a); c > 2*maxLines {
		t.Fatalf("ring of %d entries for %d lines", c, maxLines)
	}
	if allocs := testing.AllocsPerRun(100, func() { b.Write(chunk) }); allocs != 0 {
		t.Fatalf("steady-state Write allocated %v times", allocs)
	}
	text := b.Page(0, maxLines).Text
	if strings.Count(text, "\n") != maxLines-1 {
		t.Fatalf("page holds %d line breaks", strings.Count(text, "\n"))
	}
	if !strings.HasSuffix(string(chunk), text[len(text)-100:]) {
		t.Fatalf("tail is not the end of the flood")
	}
}

func floodChunk(n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = append(b, fmt.Sprintf("%06d\n", i%1_000_000)...)
	}
	return b[:n]
}

// TestAgainstModel compares Buffer with the naive model over random writes
// and random pages, with small bounds so every path is hit often.
func TestAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"a", "bc", "def", "é", "€", "🎉", "\n", "\n", "\n\n", "line\n", "x\ny\nz", strings.Repeat("w", 40)}
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for it := 0; it < iters; it++ {
		m := &model{maxLines: 1 + rng.IntN(8), maxBytes: 1 + rng.IntN(40), maxPage: 1 + rng.IntN(30)}
		b := New(m.maxLines, m.maxBytes, m.maxPage)
		var log []string
		for w := 0; w < 30; w++ {
			var sb strings.Builder
			for k := rng.IntN(4); k >= 0; k-- {
				sb.WriteString(pieces[rng.IntN(len(pieces))])
			}
			text := sb.String()
			if rng.IntN(10) == 0 {
				text = ""
			}
			log = append(log, text)
			m.write(text)
			b.Write([]byte(text))
			if b.TotalLines() != len(m.lines()) || b.Bytes() != len(m.s) || b.Dropped() != m.dropped {
				t.Fatalf("bounds %d/%d, writes %q: lines %d want %d, bytes %d want %d, dropped %v want %v",
					m.maxLines, m.maxBytes, log, b.TotalLines(), len(m.lines()), b.Bytes(), len(m.s), b.Dropped(), m.dropped)
			}
			total := b.TotalLines()
			for p := 0; p < 4; p++ {
				offset, count := rng.IntN(total+3), 1+rng.IntN(total+3)
				if got, want := b.Page(offset, count), m.page(offset, count); got != want {
					t.Fatalf("bounds %d/%d/%d, writes %q: Page(%d, %d) = %+v, want %+v",
						m.maxLines, m.maxBytes, m.maxPage, log, offset, count, got, want)
				}
			}
		}
	}
}

// TestPagesCoverHistory walks back through a buffer page by page using
// LineEnd as the next offset and checks that the pages add up to the
// retained text when no page is cut.
func TestPagesCoverHistory(t *testing.T) {
	b := New(1000, 1<<20, 1<<20)
	var want []string
	for i := 0; i < 97; i++ {
		want = append(want, "line "+strconv.Itoa(i))
	}
	writeAll(b, strings.Join(want, "\n"))
	var pages []string
	for off := 0; off < b.TotalLines(); {
		p := b.Page(off, 10)
		pages = append([]string{p.Text}, pages...)
		off = p.LineEnd
	}
	if got := strings.Join(pages, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("pages do not add up: %q", got)
	}
}

func BenchmarkWriteFlood(b *testing.B) {
	for _, chunkSize := range []int{4096, 65536} {
		b.Run("chunk="+strconv.Itoa(chunkSize), func(b *testing.B) {
			chunk := floodChunk(chunkSize)
			data := bytes.Repeat(chunk, (1<<20)/chunkSize)
			buf := New(10000, 4<<20, 256<<10)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				for i := 0; i < len(data); i += chunkSize {
					buf.Write(data[i : i+chunkSize])
				}
			}
		})
	}
}
