package scrollback

import (
	"slices"
	"strings"

	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// Source holds a transcript's final lines (*vt.Emulator does).
type Source interface {
	// Retained returns the final lines held: [first, next), next being
	// the number of final lines ever.
	Retained() (first, next int64)
	// RetainedBytes returns the bytes of the final lines held, line
	// breaks not counted.
	RetainedBytes() int
	// FinalLine returns retained final line i.
	FinalLine(i int64) string
}

// View is a transcript at one moment: the final lines src retains, then
// tail, within the scrollback bounds. It reads src only while the caller
// holds it unchanged (the session's lock).
type View struct {
	src         Source
	first, next int64 // first passes next when the bounds cut into the tail
	// tail holds the tail's lines from index tailFrom on, of tailN.
	tail            []string
	tailFrom, tailN int
	// cut: the bounds cut the front of line first, which reads as front.
	cut   bool
	front string
}

// NewView returns the transcript of src's final lines followed by tail,
// kept within maxLines lines and maxBytes bytes (line breaks counted), as
// scrollback is: the oldest lines go first, then, if one line alone is
// too long, its front. Values below 1 are read as 1.
func NewView(src Source, tail []string, maxLines, maxBytes int) View {
	v := View{src: src, tail: tail, tailN: len(tail)}
	v.first, v.next = src.Retained()
	if v.next == 0 && len(tail) == 1 && tail[0] == "" {
		v.tail, v.tailN = nil, 0 // nothing was ever printed: no lines
	}
	if v.End() == v.first {
		return v
	}
	maxLines, maxBytes = max(maxLines, 1), max(maxBytes, 1)
	// The bytes of every line held, each line break counted.
	n := src.RetainedBytes() + int(v.next-v.first) - 1
	for _, l := range v.tail {
		n += len(l) + 1
	}
	for ; v.End()-v.first > int64(maxLines); v.first++ {
		n -= len(v.at(v.first)) + 1
	}
	for n > maxBytes {
		l := v.at(v.first)
		if over := n - maxBytes; over >= len(l) && v.first < v.End()-1 {
			n -= len(l) + 1
			v.first++
			continue
		}
		// The rest fits without part of this line: its front goes, and
		// what fits of it stays.
		fits := maxBytes - (n - len(l))
		v.front = l[textcut.Tail(l, fits):]
		v.cut = true
		break
	}
	return v
}

// NewTailView returns the transcript of src's final lines followed by a
// tail of n lines, of which tail holds those from index from on: the view
// a send reads its newest lines through, without the text of the screen's
// lines above them. Its bounds are src's alone.
func NewTailView(src Source, tail []string, from, n int) View {
	v := View{src: src, tail: tail, tailFrom: from, tailN: n}
	v.first, v.next = src.Retained()
	return v
}

// Dropped reports whether the bounds dropped anything the session printed.
func (v *View) Dropped() bool { return v.first > 0 || v.cut }

// First returns the number of the oldest line held; those before it were
// dropped by the bounds.
func (v *View) First() int64 { return v.first }

// Final returns the number of final lines ever: the cursor after them.
func (v *View) Final() int64 { return v.next }

// End returns the number after the newest line.
func (v *View) End() int64 { return v.next + int64(v.tailN) }

// Line returns line i, or "" when the view does not hold it.
func (v *View) Line(i int64) string {
	if i < v.first || i >= v.End() {
		return ""
	}
	return v.at(i)
}

func (v *View) at(i int64) string {
	switch {
	case v.cut && i == v.first:
		return v.front
	case i >= v.next:
		if k := int(i-v.next) - v.tailFrom; k >= 0 {
			return v.tail[k]
		}
		return "" // not read: below the newest lines asked for
	}
	return v.src.FinalLine(i)
}

// tailHeld returns the tail lines the view holds.
func (v *View) tailHeld() []string {
	t := v.tail[max(v.first-v.next, 0):]
	if v.cut && v.first >= v.next {
		t = append([]string{v.front}, t[1:]...)
	}
	return t
}

// Newest returns lines [lo, hi) joined with '\n', each passed through fix
// (when not nil) with its number, cut to their last limit bytes on a
// character boundary. shown is the number of the first line at least part
// of which the text holds; when the cut falls just after a line's end,
// that '\n' is left out too, so the text does not begin with an empty
// remnant of a line it does not show. Only as many lines as can show are
// read.
func (v *View) Newest(lo, hi int64, limit int, fix func(i int64, line string) string) (text string, shown int64, cut bool) {
	var parts []string
	n := 0
	k := hi
	for k > lo && n <= limit {
		k--
		l := v.Line(k)
		if fix != nil {
			l = fix(k, l)
		}
		parts = append(parts, l)
		n += len(l)
		if k < hi-1 {
			n++ // the '\n' after it
		}
	}
	slices.Reverse(parts)
	text = strings.Join(parts, "\n")
	if len(text) <= limit {
		return text, k, false
	}
	c := textcut.Tail(text, limit)
	shown = k + int64(strings.Count(text[:c], "\n"))
	text = text[c:]
	if strings.HasPrefix(text, "\n") {
		text = text[1:]
		shown++
	}
	return text, shown, true
}

// Page returns up to count lines ending offset lines back from the newest
// line, cut to the last limit bytes on a character boundary. The caller has
// validated offset >= 0 and count > 0.
//
// LineBegin is offset and LineEnd is offset plus the number of lines
// returned, so the next older page starts at LineEnd; a line cut by the
// byte bound counts as returned when at least one of its bytes is.
// Truncated is set when the page was cut or the bounds dropped lines.
func (v *View) Page(offset, count, limit int) messages.ReadResult {
	total := int(v.End() - v.first)
	res := messages.ReadResult{
		TotalLines: total,
		LineBegin:  offset,
		LineEnd:    offset,
		Truncated:  v.Dropped(),
	}
	if offset >= total {
		return res
	}
	hi := v.first + int64(total-offset)
	lo := v.first + int64(max(total-offset-count, 0))
	text, shown, cut := v.Newest(lo, hi, limit, nil)
	res.Text = text
	res.LineEnd = offset + int(hi-shown)
	res.Truncated = res.Truncated || cut
	return res
}

// Since reads forward from cursor: the retained final lines at or after
// it, oldest first, then the tail, within limit bytes. Final lines the
// bounds already dropped are reported as omitted, never skipped in
// silence. A page that fills before the tail ends at a line break and sets
// More, and the returned cursor never moves past a line not shown; a
// single final line longer than a page is cut (Truncated) and counts as
// shown. A tail that does not fit a page on its own shows its last limit
// bytes (Truncated): it is re-sent whole by the next read anyway.
func (v *View) Since(cursor uint64, limit int) messages.ReadResult {
	res := messages.ReadResult{Cursor: uint64(v.next)}
	c := v.next
	if cursor < uint64(v.next) {
		c = int64(cursor)
	}
	if c < v.first {
		res.OmittedFrom, res.OmittedTo, res.Truncated = uint64(c), uint64(min(v.first, v.next)), true
		c = v.first
	}
	if v.cut && c == v.first {
		res.Truncated = true // the first line shown lost its front
	}
	var b strings.Builder
	for i := c; i < v.next; i++ {
		l := v.Line(i)
		if b.Len()+len(l)+1 <= limit {
			b.WriteString(l)
			b.WriteByte('\n')
			continue
		}
		res.More = true
		res.Cursor = uint64(i)
		if b.Len() == 0 {
			// One line longer than a page: its head, cut.
			b.WriteString(l[:textcut.Head(l, limit-1)])
			b.WriteByte('\n')
			res.Truncated = true
			res.Cursor++
		}
		res.Text = b.String()
		return res
	}
	tail := strings.Join(v.tailHeld(), "\n")
	switch {
	case b.Len()+len(tail) <= limit:
		b.WriteString(tail)
	case b.Len() > 0:
		res.More = true
	default:
		b.WriteString(tail[textcut.Tail(tail, limit):])
		res.Truncated = true
	}
	res.Text = b.String()
	return res
}
