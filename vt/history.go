package vt

import (
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/internal/textcut"
)

// history holds the final lines: logical lines whose last row scrolled off
// the main screen. It is bounded by lines and bytes; the oldest lines go
// first. Text lives in one array with the start offset of each line beside
// it, so adding a line allocates nothing once the arrays have grown, and
// dropped lines are reclaimed by compacting when they make up half.
type history struct {
	maxLines, maxBytes int

	buf   []byte
	offs  []int // offs[head:] start the retained lines in buf
	head  int
	first int64 // the index of the oldest retained line
	total int64 // lines ever made final

	// partial is the start of a logical line whose first rows scrolled off
	// while its end is still on the screen; open reports there is one (it
	// may be empty).
	partial []byte
	open    bool
}

func (h *history) init(maxLines, maxBytes int) {
	if maxLines <= 0 {
		maxLines = DefaultHistoryLines
	}
	if maxBytes <= 0 {
		maxBytes = DefaultHistoryBytes
	}
	h.maxLines, h.maxBytes = maxLines, maxBytes
}

// pushRow takes the text of a row that left the screen. A row the terminal
// wrapped waits in partial for the rest of its logical line; a logical line
// that reaches maxBytes is cut there into final lines of maxBytes each.
func (h *history) pushRow(text []byte, wrapped bool) {
	h.open = true
	for len(h.partial)+len(text) > h.maxBytes {
		n := textcut.Head(text, h.maxBytes-len(h.partial))
		if n == 0 && len(h.partial) == 0 {
			// A character longer than the whole bound: take it anyway.
			_, n = utf8.DecodeRune(text)
		}
		h.partial = append(h.partial, text[:n]...)
		text = text[n:]
		h.add(h.partial)
		h.partial = h.partial[:0]
	}
	h.partial = append(h.partial, text...)
	if !wrapped {
		h.endLine()
	}
}

// endLine makes the partial line, if any, final.
func (h *history) endLine() {
	if !h.open {
		return
	}
	h.add(h.partial)
	h.partial = h.partial[:0]
	h.open = false
}

// add makes a line final, without its trailing spaces.
func (h *history) add(text []byte) {
	text = trimRight(text)
	if len(text) > h.maxBytes {
		text = text[:textcut.Head(text, h.maxBytes)]
	}
	h.total++
	h.offs = append(h.offs, len(h.buf))
	h.buf = append(h.buf, text...)
	for h.lines() > h.maxLines || h.bytes() > h.maxBytes {
		h.head++
		h.first++
	}
	if h.head > 0 && (h.head >= len(h.offs)/2 || h.head == len(h.offs) || h.offs[h.head] > len(h.buf)/2) {
		h.compact()
	}
}

func (h *history) lines() int { return len(h.offs) - h.head }

func (h *history) bytes() int {
	if h.head == len(h.offs) {
		return 0
	}
	return len(h.buf) - h.offs[h.head]
}

func (h *history) compact() {
	shift := len(h.buf)
	if h.head < len(h.offs) {
		shift = h.offs[h.head]
	}
	n := copy(h.buf, h.buf[shift:])
	h.buf = h.buf[:n]
	m := copy(h.offs, h.offs[h.head:])
	h.offs = h.offs[:m]
	for i := range h.offs {
		h.offs[i] -= shift
	}
	h.head = 0
}

// line returns retained line k (0 is the oldest retained).
func (h *history) line(k int) []byte {
	i := h.head + k
	end := len(h.buf)
	if i+1 < len(h.offs) {
		end = h.offs[i+1]
	}
	return h.buf[h.offs[i]:end]
}

// trimRight drops trailing spaces: a line reads as it shows.
func trimRight(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == ' ' {
		n--
	}
	return b[:n]
}
