package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Transcript writes the output of the record read from r as plain text,
// line by line: escape sequences (CSI, OSC, DCS and the like) dropped,
// a carriage return going back to the start of the line and a backspace
// back one column, so that what was overwritten on a line stays
// overwritten. It is the transcript as a terminal without cursor
// movement would show it; what a full screen program drew needs the
// terminal emulator (backend/local/vt), and replaying the screen
// ("ptyrec screen") is not part of this package yet. A record that
// begins at a checkpoint starts with its screen's rows. Memory is one
// line, at most maxTranscriptLine characters (a longer one is broken).
// Errors are the Reader's, after what verified is written.
func Transcript(w io.Writer, r *Reader) error {
	out := bufio.NewWriterSize(w, 64<<10)
	lb := &lineBuilder{out: out}
	var rerr error
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		switch ev.Kind {
		case KindOutput:
			lb.feed(lb.carry.take(ev.Data))
		case KindCheckpoint:
			if ev.Checkpoint != nil && lb.empty() {
				for _, row := range ev.Checkpoint.Screen {
					lb.feed(row + "\n")
				}
			}
		}
	}
	lb.feed(lb.carry.rest())
	if len(lb.line) > 0 {
		lb.emit()
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("record: transcript: %w", err)
	}
	return rerr
}

const maxTranscriptLine = 1 << 16

// lineBuilder is the smallest terminal that gives a readable transcript:
// one line of cells and a column.
type lineBuilder struct {
	out   *bufio.Writer
	line  []rune
	col   int
	state int
	carry utf8Carry
	seen  bool
}

const (
	ground = iota
	escape
	escInter
	csi
	str    // OSC, DCS, SOS, PM, APC: up to BEL or ST
	strEsc // ESC inside a string: ST if "\"
)

func (l *lineBuilder) empty() bool { return !l.seen }

func (l *lineBuilder) feed(s string) {
	if s != "" {
		l.seen = true
	}
	for _, c := range s {
		switch l.state {
		case escape:
			switch {
			case c == '[':
				l.state = csi
			case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
				l.state = str
			case c >= 0x20 && c <= 0x2f:
				l.state = escInter
			default:
				l.state = ground
			}
			continue
		case escInter:
			if c < 0x20 || c > 0x2f {
				l.state = ground
			}
			continue
		case csi:
			if c >= 0x40 && c <= 0x7e {
				l.state = ground
			}
			continue
		case str:
			switch c {
			case 0x07, 0x9c:
				l.state = ground
			case 0x1b:
				l.state = strEsc
			}
			continue
		case strEsc:
			l.state = str
			if c == '\\' {
				l.state = ground
			}
			continue
		}
		switch {
		case c == 0x1b:
			l.state = escape
		case c == 0x9b:
			l.state = csi
		case c == 0x9d || c == 0x90:
			l.state = str
		case c == '\n':
			l.emit()
		case c == '\r':
			l.col = 0
		case c == '\b':
			l.col = max(l.col-1, 0)
		case c == '\t':
			l.col = (l.col/8 + 1) * 8
		case c < 0x20 || c >= 0x7f && c < 0xa0:
		default:
			l.put(c)
		}
	}
}

func (l *lineBuilder) put(c rune) {
	if l.col >= maxTranscriptLine {
		l.emit()
	}
	for len(l.line) < l.col {
		l.line = append(l.line, ' ')
	}
	if l.col < len(l.line) {
		l.line[l.col] = c
	} else {
		l.line = append(l.line, c)
	}
	l.col++
}

func (l *lineBuilder) emit() {
	l.out.WriteString(strings.TrimRight(string(l.line), " "))
	l.out.WriteByte('\n')
	l.line, l.col = l.line[:0], 0
}
