package scrollback

// keepOnTake is the largest array Take and Reset keep for reuse. A send's
// buffer is drained repeatedly while the send runs, so a small array is worth
// keeping; a large one would stay pinned by an idle session, so it goes.
const keepOnTake = 16 << 10

// Tail is a bounded buffer that keeps the most recent maxBytes of text (cut on
// a UTF-8 boundary) and remembers whether it dropped anything since the last
// Take. It is allocated lazily and is not safe for concurrent use.
type Tail struct {
	w       window // w.limit is maxBytes
	dropped bool
}

// NewTail returns an empty Tail that keeps at most maxBytes bytes. A value
// below 1 is treated as 1.
func NewTail(maxBytes int) *Tail {
	return &Tail{w: window{limit: max(maxBytes, 1)}}
}

// Write appends sanitized text, dropping the oldest bytes beyond the bound.
func (t *Tail) Write(text []byte) {
	if len(text) == 0 {
		return
	}
	text, skipped := t.w.fit(text)
	if skipped {
		t.dropped = true
	}
	t.w.append(text)
	if t.w.trim() {
		t.dropped = true
	}
}

// Take returns the buffered text and whether anything was dropped since the
// previous Take, and empties the buffer, releasing a large backing array.
func (t *Tail) Take() (text string, dropped bool) {
	text, dropped = string(t.w.text()), t.dropped
	t.Reset()
	return text, dropped
}

// Len returns the number of buffered bytes.
func (t *Tail) Len() int { return t.w.len() }

// Reset discards the buffered text and the dropped flag, releasing a large
// backing array.
func (t *Tail) Reset() {
	t.w.release(keepOnTake)
	t.dropped = false
}
