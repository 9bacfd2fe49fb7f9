// Package replay rebuilds a recorded session's screen at any of its
// events: it feeds the record's output and resizes, in order, through the
// same terminal emulator the live session draws its screen with (package
// vt), so the screen's hash at an event equals the hash a live screen read
// gave at that event's number (messages.Screen.Seq).
//
// What the record does not hold cannot be replayed: a credential the
// record redacted is drawn as its redaction, and a record whose oldest
// segments were cut starts from its checkpoint's screen, which keeps the
// text and the cursor but not colours, modes or scroll margins, nor the
// main screen behind a full-screen program.
package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ptyactor/ptyactor/vt"
	"github.com/ptyactor/ptyactor/record"
)

// ErrNoScreen: the record starts at a checkpoint that holds no screen (a
// segment began before the session gave one), so no screen after it can
// be rebuilt.
var ErrNoScreen = errors.New("replay: the record starts at a checkpoint without a screen")

// RangeError says the asked number is not in the record: before its
// first event (cut) or after its last.
type RangeError struct {
	At, First, Last uint64
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("replay: event %d is not in the record (it holds %d to %d)", e.At, e.First, e.Last)
}

// Screen returns the screen after the event numbered at (0: the last
// one) and that event's number: what a live screen read with that Seq
// showed. It reads r up to that event and stops there. An incomplete
// record replays as far as it verified: asked for its end, it returns
// that screen and the *record.IncompleteError.
func Screen(r *record.Reader, at uint64) (vt.Screen, uint64, error) {
	first, err := r.Next()
	if err != nil {
		return vt.Screen{}, 0, err
	}
	emu, err := begin(first)
	if err != nil {
		return vt.Screen{}, 0, err
	}
	last := first.Seq
	if at != 0 && at < first.Seq {
		return vt.Screen{}, 0, &RangeError{At: at, First: first.Seq, Last: last}
	}
	for at == 0 || last < at {
		ev, err := r.Next()
		switch {
		case errors.Is(err, io.EOF) && at == 0:
			return emu.Screen(), last, nil
		case errors.Is(err, io.EOF):
			return vt.Screen{}, 0, &RangeError{At: at, First: first.Seq, Last: last}
		case err != nil && at == 0:
			return emu.Screen(), last, err
		case err != nil:
			return vt.Screen{}, 0, err
		}
		if ev.Kind == record.KindEnd {
			continue // the writer's end, numbered as the last event
		}
		if at != 0 && ev.Seq > at {
			break // numbers are gapless: only a forged record gets here
		}
		if err := apply(emu, ev); err != nil {
			return vt.Screen{}, 0, err
		}
		last = ev.Seq
	}
	return emu.Screen(), last, nil
}

// begin makes the emulator a record starts with: the start's size, or the
// checkpoint's screen drawn at its size.
func begin(first record.Event) (*vt.Emulator, error) {
	emu, err := vt.New(first.Rows, first.Cols, vt.Options{})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if first.Kind != record.KindCheckpoint {
		return emu, nil
	}
	cp := first.Checkpoint
	if cp == nil || cp.Screen == nil {
		return nil, ErrNoScreen
	}
	emu.Feed([]byte(paint(cp)))
	return emu, nil
}

// paint draws a checkpoint's screen: the main screen a full-screen
// program hides and the cursor leaving it brings back, then (on the
// alternate screen, when a program had it) the rows shown, the scroll
// region a program set, and the cursor.
func paint(cp *record.Checkpoint) string {
	var b strings.Builder
	if cp.Hidden != nil {
		rows(&b, cp.Hidden.Rows)
		cup(&b, cp.Hidden.Cursor)
	}
	if cp.Alt {
		b.WriteString("\x1b[?1049h") // saves the cursor it leaves
	}
	rows(&b, cp.Screen)
	if m := cp.Margins; m != nil {
		fmt.Fprintf(&b, "\x1b[%d;%dr", m[0]+1, m[1]+1)
	}
	cup(&b, cp.Cursor)
	return b.String()
}

// rows draws each row at its place.
func rows(b *strings.Builder, rows []string) {
	for y, row := range rows {
		if row != "" {
			cup(b, [2]int{y, 0})
			b.WriteString(row)
		}
	}
}

// cup moves the cursor to a row and column, from 0.
func cup(b *strings.Builder, at [2]int) {
	b.WriteString("\x1b[" + strconv.Itoa(at[0]+1) + ";" + strconv.Itoa(at[1]+1) + "H")
}

// apply feeds one event to the emulator: output is drawn, a resize
// resizes; nothing else reaches a screen.
func apply(emu *vt.Emulator, ev record.Event) error {
	switch ev.Kind {
	case record.KindOutput:
		emu.Feed([]byte(ev.Data))
	case record.KindResize:
		if err := emu.Resize(ev.Rows, ev.Cols); err != nil {
			return fmt.Errorf("replay: event %d: %w", ev.Seq, err)
		}
	}
	return nil
}

// Transcript writes the text the terminal showed over the whole record,
// one line each, as terminal_read gives it: the final lines (those that
// scrolled off or ended), then the lines on the screen, the cursor's line
// with its blanks up to the cursor (a prompt reads "$ "). Lines are
// written as they become final, so memory stays the emulator's, whatever
// the record's size. An incomplete record is written as far as it
// verified, and its error returned.
func Transcript(w io.Writer, r *record.Reader) error {
	out := bufio.NewWriterSize(w, 64<<10)
	first, err := r.Next()
	if err != nil {
		return err
	}
	emu, err := begin(first)
	if err != nil {
		return err
	}
	var next int64 // the next final line to write
	var rerr error
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		if err := apply(emu, ev); err != nil {
			return err
		}
		lo, hi := emu.Retained()
		for next = max(next, lo); next < hi; next++ {
			out.WriteString(emu.FinalLine(next))
			out.WriteByte('\n')
		}
	}
	tail, _ := emu.TailFrom(0)
	if index, before := emu.CursorLine(); index == len(tail)-1 && len(before) > len(tail[index]) && strings.HasPrefix(before, tail[index]) {
		tail[index] = before
	}
	if next == 0 && len(tail) == 1 && tail[0] == "" {
		tail = nil // nothing was ever printed
	}
	for _, l := range tail {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return rerr
}
