package vt

// The transcript read line by line, for a reader that pages through it
// without copying every final line (Transcript copies them all), and the
// cursor's place in it.

// Retained returns the final lines the history holds: [first, next), next
// being FinalLines. Lines before first were dropped by the history bounds.
func (e *Emulator) Retained() (first, next int64) { return e.hist.first, e.hist.total }

// RetainedBytes returns the bytes of the final lines the history holds,
// line breaks not counted.
func (e *Emulator) RetainedBytes() int { return e.hist.bytes() }

// FinalLine returns final line i, which must be retained
// (first <= i < next of Retained); otherwise "".
func (e *Emulator) FinalLine(i int64) string {
	h := &e.hist
	if i < h.first || i >= h.total {
		return ""
	}
	return string(h.line(int(i - h.first)))
}

// TailFrom returns Transcript's Tail[from:] and len(Tail), without
// building the text of the lines before from: a reader that wants only the
// newest lines of the screen pays for those.
func (e *Emulator) TailFrom(from int) (lines []string, n int) { return e.tail(from) }

// CursorLine returns where the cursor stands in the transcript's tail: the
// index in Transcript's Tail of the logical line it is on, and that line's
// text before the cursor, blanks read as spaces up to the cursor (so a
// prompt reads "$ ", where the tail, trimmed, reads "$"). While a program
// shows the alternate screen the main screen's cursor is hidden: the line
// is the one the tail ends with, and its text is the whole line, trimmed.
func (e *Emulator) CursorLine() (index int, before string) {
	s := &e.main
	y, x, pad := e.y, min(e.x, e.cols), true
	if e.alt != nil {
		y, x, pad = e.altFrom, e.cols, false
	}
	start := y
	for start > 0 && s.line(start-1).wrapped {
		start--
	}
	for k := 0; k < start; k++ {
		if !s.line(k).wrapped {
			index++
		}
	}
	var b []byte
	if start == 0 {
		b = append(b, e.hist.partial...)
	}
	for k := start; k < y; k++ {
		b = appendRow(b, s.line(k))
	}
	l := s.line(y)
	n := min(x, len(l.cells))
	b = appendRow(b, &line{cells: l.cells[:n], marks: l.marks})
	if pad {
		for range x - n {
			b = append(b, ' ')
		}
	} else {
		b = trimRight(b)
	}
	return index, string(b)
}
