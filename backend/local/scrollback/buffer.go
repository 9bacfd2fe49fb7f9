package scrollback

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

// Buffer is retained scrollback bounded by lines and bytes, allocated lazily
// (an idle or empty Buffer holds no big allocation). It is not safe for
// concurrent use; the session that owns it serializes access.
type Buffer struct {
	maxLines int
	maxPage  int
	w        window // the retained text; w.limit is maxBytes
	// breaks holds the positions in w.buf of the retained '\n' bytes, oldest
	// first. There are at most maxLines-1 of them: n breaks make n+1 lines.
	breaks  ring
	dropped bool
	// final counts the final lines ever written (every '\n', retained or
	// not): the cursor of the transcript.
	final uint64
}

// New returns an empty Buffer that keeps at most maxLines lines and maxBytes
// bytes, and cuts each page to at most maxPageBytes bytes. Values below 1 are
// treated as 1; configuration is validated before it gets here.
func New(maxLines, maxBytes, maxPageBytes int) *Buffer {
	return &Buffer{
		maxLines: max(maxLines, 1),
		maxPage:  max(maxPageBytes, 1),
		w:        window{limit: max(maxBytes, 1)},
	}
}

// Write appends sanitized text (valid UTF-8, '\n' line breaks) and drops
// what no longer fits from the front.
func (b *Buffer) Write(text []byte) {
	if len(text) == 0 {
		return
	}
	b.final += uint64(bytes.Count(text, []byte{'\n'}))
	// Only a tail of a long text can survive, and nothing retained before
	// it: skip straight there instead of buffering what would be dropped.
	text, skipped := b.w.fit(text)
	if skipped {
		b.breaks.clear()
		b.dropped = true
	}
	base := len(b.w.buf)
	if shift := b.w.append(text); shift > 0 {
		b.breaks.shift(shift)
		base -= shift
	}
	for i := 0; ; {
		j := bytes.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		b.lineBreak(base + i + j)
		i += j + 1
	}
	if b.w.trim() {
		b.dropped = true
		for b.breaks.n > 0 && b.breaks.at(0) < b.w.head {
			b.breaks.pop()
		}
	}
}

// lineBreak records the '\n' at pos, dropping the oldest line when that makes
// one line too many.
func (b *Buffer) lineBreak(pos int) {
	if b.breaks.n < b.maxLines-1 {
		b.breaks.push(pos)
		return
	}
	// The oldest line goes together with the '\n' that ends it. With
	// maxLines == 1 that '\n' is the one at pos.
	end := pos
	if b.breaks.n > 0 {
		end = b.breaks.pop()
		b.breaks.push(pos)
	}
	b.w.head = end + 1
	b.dropped = true
}

// TotalLines returns the number of retained lines: the pieces of splitting
// the retained text on '\n', or 0 when nothing is retained.
func (b *Buffer) TotalLines() int {
	if b.w.len() == 0 {
		return 0
	}
	return b.breaks.n + 1
}

// Dropped reports whether the bounds ever dropped retained output. It is
// sticky: once lost, the history is incomplete for good.
func (b *Buffer) Dropped() bool { return b.dropped }

// Bytes returns the number of retained bytes.
func (b *Buffer) Bytes() int { return b.w.len() }

// Page returns up to count lines ending offset lines back from the newest
// line, cut to the last maxPageBytes bytes on a character boundary. The
// caller has validated offset >= 0 and count > 0.
//
// LineBegin is offset and LineEnd is offset plus the number of lines
// returned, so the next older page starts at LineEnd. A line cut by the byte
// bound counts as returned when at least one of its bytes is; when the cut
// falls exactly on a line break, that break is left out too, so the page does
// not begin with an empty remnant of a line it does not show. Truncated is
// set when the page was cut or when Dropped reports lost history.
func (b *Buffer) Page(offset, count int) messages.ReadResult {
	total := b.TotalLines()
	res := messages.ReadResult{
		TotalLines: total,
		LineBegin:  offset,
		LineEnd:    offset,
		Truncated:  b.dropped,
	}
	if offset >= total {
		return res
	}
	end := total - offset
	begin := max(0, end-count)
	lo, hi := b.lineStart(begin), b.lineEnd(end-1)
	first := begin
	if hi-lo > b.maxPage {
		res.Truncated = true
		lo = runeStart(b.w.buf[:hi], hi-b.maxPage)
		first = b.breaks.countBefore(lo) // the line lo falls in
		if lo < hi && b.w.buf[lo] == '\n' {
			lo++
			first++
		}
	}
	res.Text = string(b.w.buf[lo:hi])
	res.LineEnd = offset + end - first
	return res
}

// Final returns the number of final lines ever written: the cursor after
// everything printed so far.
func (b *Buffer) Final() uint64 { return b.final }

// Since reads forward from cursor: the retained final lines at or after
// it, oldest first, then the unfinished line, within maxPageBytes. Lines
// the bounds already dropped are reported as omitted, never skipped in
// silence; a page that fills before the newest line ends at a line break
// and sets More, and the returned cursor never moves past a line not
// shown. A single line longer than a page is cut (Truncated) and counts
// as shown.
func (b *Buffer) Since(cursor uint64) messages.ReadResult {
	res := messages.ReadResult{Cursor: b.final}
	cursor = min(cursor, b.final)
	// The retained text starts with (the end of) final line first; after
	// the drops the bounds made, its beginning may be gone.
	n := uint64(b.breaks.n)
	first := b.final - n
	if cursor < first {
		res.OmittedFrom, res.OmittedTo, res.Truncated = cursor, first, true
		cursor = first
	}
	lo := b.w.head
	if k := int(cursor - first); k > 0 {
		lo = b.breaks.at(k-1) + 1
	} else if b.dropped && b.w.len() > 0 {
		res.Truncated = true // the first line shown may have lost its beginning
	}
	hi := len(b.w.buf)
	if hi-lo <= b.maxPage {
		res.Text = string(b.w.buf[lo:hi])
		return res
	}
	res.More = true
	limit := lo + b.maxPage
	below := b.breaks.countBefore(lo)  // breaks before the page
	fit := b.breaks.countBefore(limit) // breaks before its limit
	if fit > below {
		// End the page at the last line break that fits.
		end := b.breaks.at(fit - 1)
		res.Text = string(b.w.buf[lo : end+1])
		res.Cursor = first + uint64(fit)
		return res
	}
	// One line longer than a page: its head, cut; it counts as shown.
	end := limit
	for end > lo && !utf8.RuneStart(b.w.buf[end]) {
		end--
	}
	res.Text = string(b.w.buf[lo:end]) + "\n"
	res.Truncated = true
	res.Cursor = min(first+uint64(below)+1, b.final)
	res.More = res.Cursor < b.final
	return res
}

// lineStart returns the position in w.buf where retained line k begins.
func (b *Buffer) lineStart(k int) int {
	if k == 0 {
		return b.w.head
	}
	return b.breaks.at(k-1) + 1
}

// lineEnd returns the position in w.buf just past retained line k, excluding
// its '\n'.
func (b *Buffer) lineEnd(k int) int {
	if k < b.breaks.n {
		return b.breaks.at(k)
	}
	return len(b.w.buf)
}

// ring is a FIFO of ascending positions. Its array grows by doubling (a power
// of two, so indexing is a mask) and is bounded by its owner's pops.
type ring struct {
	a     []int
	start int
	n     int
}

func (r *ring) at(k int) int { return r.a[(r.start+k)&(len(r.a)-1)] }

func (r *ring) push(v int) {
	if r.n == len(r.a) {
		na := make([]int, max(16, 2*len(r.a)))
		for k := 0; k < r.n; k++ {
			na[k] = r.at(k)
		}
		r.a, r.start = na, 0
	}
	r.a[(r.start+r.n)&(len(r.a)-1)] = v
	r.n++
}

func (r *ring) pop() int {
	v := r.a[r.start]
	r.start = (r.start + 1) & (len(r.a) - 1)
	r.n--
	return v
}

func (r *ring) clear() { r.start, r.n = 0, 0 }

// shift subtracts d from every position, after the window moved its text.
func (r *ring) shift(d int) {
	for k := 0; k < r.n; k++ {
		r.a[(r.start+k)&(len(r.a)-1)] -= d
	}
}

// countBefore returns how many positions are below p.
func (r *ring) countBefore(p int) int {
	return sort.Search(r.n, func(k int) bool { return r.at(k) >= p })
}
