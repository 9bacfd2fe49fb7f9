package vt

import (
	"encoding/hex"
	"hash/fnv"
	"strconv"
	"unicode/utf8"
)

// Screen is a snapshot of what the terminal shows.
type Screen struct {
	// Rows holds the text of every row, top to bottom, as
	// `tmux capture-pane -p` shows it: without attributes (Emulator.Cell
	// has them), a wide character once, trailing blanks trimmed.
	Rows []string
	// CursorRow and CursorCol are the cursor's cell, counted from 0.
	CursorRow, CursorCol int
	// Size is the terminal's size.
	Size Size
	// AltScreen reports that a program switched to the alternate screen
	// (full-screen programs do; the history does not grow meanwhile).
	AltScreen bool
	// Hash identifies Rows and the cursor position: equal screens have
	// equal hashes, in any process (64-bit FNV-1a of the rows and the
	// cursor, in hex), so a caller can tell a changed screen cheaply.
	Hash string
}

// Screen returns the screen as it is now.
func (e *Emulator) Screen() Screen {
	s := Screen{
		Rows:      make([]string, e.rows),
		CursorRow: e.y,
		CursorCol: min(e.x, e.cols-1),
		Size:      e.Size(),
		AltScreen: e.alt != nil,
	}
	h := fnv.New64a()
	for y := range s.Rows {
		e.tbuf = trimRight(appendRow(e.tbuf[:0], e.scr.line(y)))
		s.Rows[y] = string(e.tbuf)
		e.tbuf = append(e.tbuf, '\n')
		h.Write(e.tbuf)
	}
	b := strconv.AppendInt(e.tbuf[:0], int64(s.CursorRow), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.CursorCol), 10)
	h.Write(b)
	s.Hash = hex.EncodeToString(h.Sum(nil))
	return s
}

// Transcript is the text the terminal showed, as `tmux capture-pane -p -J
// -S -` shows it: the history, then the main screen's rows; lines the
// terminal wrapped are joined into one logical line, attributes are
// dropped, and trailing spaces are trimmed.
type Transcript struct {
	// First is the index of Final[0]. It is the index asked for, or later
	// when the history bounds dropped the lines in between.
	First int64
	// Final holds the final lines from First on: logical lines whose last
	// row scrolled off the main screen (or was cleared away). A final line
	// never changes.
	Final []string
	// Next is the number of final lines so far: the index to ask for next
	// time to get only new ones.
	Next int64
	// Tail holds the logical lines on the main screen, from its top to the
	// last row with text or the cursor, whichever is lower; the first one
	// includes the rows of its line that already scrolled off. They may
	// still change: a program can move the cursor back and rewrite them.
	Tail []string
}

// FinalLines returns the number of lines that became final so far,
// including those the history bounds dropped since.
func (e *Emulator) FinalLines() int64 { return e.hist.total }

// Transcript returns the final lines from index from on (at most the
// history bounds hold) and the current tail. While a program uses the alternate screen the tail is still the
// main screen's (the alternate screen is in Screen), so the transcript
// reads as a log of the session whatever ran in it.
func (e *Emulator) Transcript(from int64) Transcript {
	h := &e.hist
	t := Transcript{First: max(from, h.first), Next: h.total}
	for i := t.First; i < h.total; i++ {
		t.Final = append(t.Final, string(h.line(int(i-h.first))))
	}
	if t.First > t.Next {
		t.First = t.Next
	}

	t.Tail, _ = e.tail(0)
	return t
}

// tail returns the tail's lines from index from on and the number of lines
// in it, building the text only of those returned.
func (e *Emulator) tail(from int) (lines []string, n int) {
	s := &e.main
	last := e.y
	if e.alt != nil {
		last = e.altFrom
	}
	for y := e.rows - 1; y > last; y-- {
		if len(s.line(y).cells) > 0 {
			last = y
			break
		}
	}
	b := e.tbuf[:0]
	if from <= 0 {
		b = append(b, e.hist.partial...)
	}
	for y := 0; y <= last; y++ {
		l := s.line(y)
		if n >= from {
			b = appendRow(b, l)
		}
		if !l.wrapped || y == last {
			if n >= from {
				lines = append(lines, string(trimRight(b)))
				b = b[:0]
			}
			n++
		}
	}
	e.tbuf = b
	return lines, n
}

// push moves a row leaving the main screen into the history.
func (e *Emulator) push(l *line) {
	e.tbuf = appendRow(e.tbuf[:0], l)
	e.hist.pushRow(e.tbuf, l.wrapped)
}

// appendRow appends the text of l's used cells, as tmux's capture does:
// blanks read as spaces, the right half of a wide character reads as
// nothing, combining characters follow their base. Cells never written
// since the row was last cleared whole are not used: the column a wide
// character that did not fit left empty joins nothing.
func appendRow(b []byte, l *line) []byte {
	for x, c := range l.cells {
		switch {
		case c == blank:
			b = append(b, ' ')
			continue
		case c == tail:
			continue
		case c < utf8.RuneSelf:
			b = append(b, byte(c))
		default:
			b = utf8.AppendRune(b, c)
		}
		if l.marks != nil {
			b = append(b, l.marks[x]...)
		}
	}
	return b
}

// Hidden is what the alternate screen hides: the main screen's rows, as
// Screen gives them, and the cursor that leaving the alternate screen
// brings back. A record's checkpoint keeps it, so that a replay from the
// checkpoint shows the shell again when the full-screen program ends.
type Hidden struct {
	Rows                 []string
	CursorRow, CursorCol int
}

// Hidden returns the main screen behind the alternate one, and false
// while the main screen is shown.
func (e *Emulator) Hidden() (Hidden, bool) {
	if e.alt == nil {
		return Hidden{}, false
	}
	h := Hidden{Rows: make([]string, e.rows), CursorRow: e.y, CursorCol: e.x}
	if e.altSaved.set {
		h.CursorRow, h.CursorCol = e.altSaved.y, e.altSaved.x
	}
	h.CursorRow, h.CursorCol = min(h.CursorRow, e.rows-1), min(h.CursorCol, e.cols-1)
	for y := range h.Rows {
		e.tbuf = trimRight(appendRow(e.tbuf[:0], e.main.line(y)))
		h.Rows[y] = string(e.tbuf)
	}
	return h, true
}

// Margins returns the scroll region: its top and bottom rows, from 0.
func (e *Emulator) Margins() (top, bottom int) { return e.top, e.bot }
