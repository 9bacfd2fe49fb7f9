package scrollback

import "unicode/utf8"

// minWindow is the first allocation of a window, so that a trickle of small
// writes does not grow the array a few bytes at a time.
const minWindow = 512

// window is the retained tail of a byte stream: buf[head:] is the text. The
// front is dropped by advancing head, and the space is reclaimed by
// compacting the next time an append does not fit. Callers append at most
// limit bytes at a time and trim the text to at most limit bytes after each
// append, so the array never needs more than 2×limit bytes.
type window struct {
	buf   []byte
	head  int
	limit int
}

func (w *window) text() []byte { return w.buf[w.head:] }

func (w *window) len() int { return len(w.buf) - w.head }

// append adds p, len(p) <= limit, at the end. It returns how many bytes the
// retained text moved toward the front of the array, so callers that keep
// positions into buf can adjust them (0 when nothing moved).
func (w *window) append(p []byte) (shift int) {
	if len(w.buf)+len(p) > cap(w.buf) {
		shift = w.head
		n := w.len()
		need := n + len(p)
		if need <= cap(w.buf)/2 || cap(w.buf) >= 2*w.limit {
			// Compacting frees at least half the array (or all the array may
			// ever hold), so its cost is paid for by the writes that filled it.
			copy(w.buf, w.buf[w.head:])
			w.buf = w.buf[:n]
		} else {
			nb := make([]byte, n, min(max(2*need, minWindow), 2*w.limit))
			copy(nb, w.buf[w.head:])
			w.buf = nb
		}
		w.head = 0
	}
	w.buf = append(w.buf, p...)
	return shift
}

// fit returns what of text an append can keep. Text longer than limit
// leaves only its longest valid UTF-8 tail of at most limit bytes, and
// nothing retained before it: fit then drops the retained text (head moves
// to the end, so the append need not copy it) and reports skipped.
func (w *window) fit(text []byte) (_ []byte, skipped bool) {
	if len(text) <= w.limit {
		return text, false
	}
	w.head = len(w.buf)
	return text[tailStart(text, w.limit):], true
}

// trim drops the front of the text so that at most limit bytes remain, cut
// on a character boundary. It reports whether anything was dropped.
func (w *window) trim() bool {
	if w.len() <= w.limit {
		return false
	}
	w.head = runeStart(w.buf, len(w.buf)-w.limit)
	return true
}

// release forgets the text and, if the array has grown past keep bytes, the
// array too, so an idle owner does not pin a large allocation.
func (w *window) release(keep int) {
	if cap(w.buf) > keep {
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	w.head = 0
}

// runeStart returns the first index >= i at which a character of b starts,
// so that b[runeStart(b, i):] is the longest valid UTF-8 tail of b no longer
// than len(b)-i. In valid UTF-8 at most three continuation bytes are skipped;
// the bound keeps the cost constant even if b is not valid.
func runeStart(b []byte, i int) int {
	for n := 0; i < len(b) && n < utf8.UTFMax-1 && !utf8.RuneStart(b[i]); n++ {
		i++
	}
	return i
}

// tailStart returns where the longest valid UTF-8 tail of b of at most limit
// bytes begins.
func tailStart(b []byte, limit int) int {
	if len(b) <= limit {
		return 0
	}
	return runeStart(b, len(b)-limit)
}
