package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ExportV3 writes the record read from r as an asciicast v3 file (the
// format of asciinema 3 and asciinema-player 3.x): a header with the
// terminal's size, TERM and start time, then one event a line with the
// time since the one before. ExportV2 writes asciicast v2 (asciinema
// 2.x): absolute times, and the exit as a marker since v2 has no "x".
//
// What a record becomes:
//   - output: "o", a character split across two reads joined again;
//   - input (and foreign input found in the terminal): "i"; a secret
//     input (typed with echo off) is "*" repeated its length, the record
//     holding nothing more;
//   - a resize: "r", "COLSxROWS";
//   - a send's start: "m", "send #TICKET: FIRST LINE" (a wait: "wait
//     #TICKET"); its settle: "m", "settled #TICKET: exit CODE, DURATION,
//     REASON"; a signal and a mark: "m" with the name or label;
//   - the exit: in v3, the exit event "x" with the status as a string
//     (asciicast v3's "numerical exit status"; a death by a signal N is
//     128+N, as a shell's $? says it), the very last event; in v2, which
//     has no exit event, a marker "exit CODE" or "exit: killed by SIG".
//
// Prompts, checkpoints after the first record and the end record are not
// shown. A record that begins at a checkpoint starts with its screen. A
// record with nothing to show (a start and nothing else) gets one empty
// output at 0: asciinema-player 3.x refuses a file without events.
// Both read and write one event at a time: memory does not grow with
// the record. The export stops at the first record that does not verify
// and returns the Reader's error; an *IncompleteError comes after every
// record that verified is written.
func ExportV3(w io.Writer, r *Reader) error { return export(w, r, 3) }

// ExportV2 writes the record as asciicast v2 (see ExportV3).
func ExportV2(w io.Writer, r *Reader) error { return export(w, r, 2) }

type castWriter struct {
	out     *bufio.Writer
	version int
	// prev is the last event's time in microseconds since the start:
	// intervals are taken between rounded times, so that they add up.
	prev int64
	t0   time.Duration
	// n counts the events written.
	n   int
	enc *json.Encoder
	js  bytes.Buffer
	// carry holds the start of a UTF-8 character an output event cut.
	carry utf8Carry
	// exit is v3's exit, held back to go last: the session's last settle
	// (its send ended by the exit) is numbered after the exit, and a
	// player stops at "x".
	exit *Event
}

// export writes the record r reads as an asciicast of version 2 or 3: the
// header from the first event, one line per event after it, then what
// export held back (a cut character's bytes, v3's exit).
func export(w io.Writer, r *Reader, version int) error {
	first, err := r.Next()
	if err != nil {
		return err
	}
	c := &castWriter{out: bufio.NewWriterSize(w, 64<<10), version: version, t0: first.Mono}
	c.enc = json.NewEncoder(&c.js)
	c.enc.SetEscapeHTML(false)
	if err := c.header(first); err != nil {
		return err
	}
	var rerr error
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		c.record(ev)
	}
	c.finish()
	if err := c.out.Flush(); err != nil {
		return fmt.Errorf("record: export: %w", err)
	}
	return rerr
}

// record writes the line of one event after the first, by its kind.
func (c *castWriter) record(ev Event) {
	switch ev.Kind {
	case KindOutput:
		if s := c.carry.take(ev.Data); s != "" {
			c.event(ev.Mono, "o", s)
		}
	case KindInput, KindForeign:
		data := ev.Data
		if ev.Secret {
			data = strings.Repeat("*", ev.Len)
		}
		c.event(ev.Mono, "i", data)
	case KindResize:
		c.event(ev.Mono, "r", fmt.Sprintf("%dx%d", ev.Cols, ev.Rows))
	case KindSend, KindSettle, KindSignal, KindMark, KindControl:
		c.event(ev.Mono, "m", marker(ev))
	case KindExit:
		switch {
		case ev.Exit == nil:
		case c.version == 3 && exitStatus(ev.Exit) != "":
			c.exit = &ev
		case ev.Exit.Code != nil:
			c.event(ev.Mono, "m", "exit "+strconv.Itoa(*ev.Exit.Code))
		default:
			c.event(ev.Mono, "m", "exit: killed by "+ev.Exit.Signal)
		}
	}
}

// finish writes what the events held back: the bytes of a character the
// record ends inside, v3's exit, and an empty output when there was no
// event at all.
func (c *castWriter) finish() {
	if s := c.carry.rest(); s != "" {
		c.event(c.t0+time.Duration(c.prev)*time.Microsecond, "o", s)
	}
	if c.exit != nil {
		c.event(c.exit.Mono, "x", exitStatus(c.exit.Exit))
	}
	if c.n == 0 {
		// asciinema-player 3.x fails to load a header alone ("recording
		// is missing events"); an empty output plays as the empty
		// session it was.
		c.event(c.t0, "o", "")
	}
}

func (c *castWriter) header(first Event) error {
	cols, rows, term := first.Cols, first.Rows, ""
	var screen []string
	switch first.Kind {
	case KindStart:
		if first.Start != nil {
			term = first.Start.Term
		}
	case KindCheckpoint:
		term = first.Checkpoint.Term
		screen = first.Checkpoint.Screen
	}
	if cols <= 0 || rows <= 0 {
		cols, rows = 80, 24
	}
	var h any
	if c.version == 2 {
		type v2 struct {
			Version   int               `json:"version"`
			Width     int               `json:"width"`
			Height    int               `json:"height"`
			Timestamp int64             `json:"timestamp"`
			Env       map[string]string `json:"env,omitempty"`
		}
		v := v2{Version: 2, Width: cols, Height: rows, Timestamp: first.Wall.Unix()}
		if term != "" {
			v.Env = map[string]string{"TERM": term}
		}
		h = v
	} else {
		type termInfo struct {
			Cols int    `json:"cols"`
			Rows int    `json:"rows"`
			Type string `json:"type,omitempty"`
		}
		type v3 struct {
			Version   int      `json:"version"`
			Term      termInfo `json:"term"`
			Timestamp int64    `json:"timestamp"`
		}
		h = v3{Version: 3, Term: termInfo{Cols: cols, Rows: rows, Type: term}, Timestamp: first.Wall.Unix()}
	}
	c.js.Reset()
	if err := c.enc.Encode(h); err != nil {
		return fmt.Errorf("record: export: %w", err)
	}
	c.out.Write(c.js.Bytes())
	if len(screen) > 0 {
		c.event(first.Mono, "o", "\x1b[H\x1b[2J"+strings.Join(screen, "\r\n"))
	}
	return nil
}

// event writes one event line; the bufio.Writer keeps the first error
// for the final Flush.
func (c *castWriter) event(t time.Duration, code, data string) {
	us := max((t - c.t0).Microseconds(), c.prev)
	stamp := us
	if c.version == 3 {
		stamp = us - c.prev
	}
	c.prev = us
	c.n++
	c.js.Reset()
	_ = c.enc.Encode(data) // a string always encodes
	fmt.Fprintf(c.out, "[%d.%06d, %q, %s]\n", stamp/1e6, stamp%1e6, code, bytes.TrimSuffix(c.js.Bytes(), []byte("\n")))
}

// marker is the label of a send's start or settle, a signal or a mark.
func marker(ev Event) string {
	switch ev.Kind {
	case KindSend:
		s := ev.Send
		if s == nil {
			return "send"
		}
		switch {
		case s.Wait:
			return fmt.Sprintf("wait #%d", s.Ticket)
		case len(s.Lines) > 0:
			m := fmt.Sprintf("send #%d: %s", s.Ticket, s.Lines[0])
			if len(s.Lines) > 1 {
				m += fmt.Sprintf(" (+%d lines)", len(s.Lines)-1)
			}
			return m
		default:
			return fmt.Sprintf("send #%d: keys %s", s.Ticket, strings.Join(s.Keys, " "))
		}
	case KindSettle:
		s := ev.Settle
		if s == nil {
			return "settled"
		}
		code := "no exit code"
		if s.ExitCode != nil {
			code = "exit " + strconv.Itoa(*s.ExitCode)
		}
		return fmt.Sprintf("settled #%d: %s, %s, %s", s.Ticket, code, s.Duration.Round(time.Millisecond), s.Reason)
	case KindSignal:
		if ev.Signal == nil {
			return "signal"
		}
		return "signal " + ev.Signal.Name
	case KindControl:
		c := ev.Control
		switch {
		case c == nil:
			return "control"
		case c.Person && c.Interrupt:
			return fmt.Sprintf("control: %s took the input (SIGINT)", c.Holder)
		case c.Person:
			return fmt.Sprintf("control: %s took the input", c.Holder)
		default:
			return fmt.Sprintf("control: back to the agent (%s)", c.Reason)
		}
	default:
		return ev.Data
	}
}

// exitStatus is the "x" event's data: the exit code, or 128 plus the
// number of the signal that killed the shell; "" for a signal this
// platform has no number for (the export then keeps the marker).
func exitStatus(e *Exit) string {
	if e.Code != nil {
		return strconv.Itoa(*e.Code)
	}
	if n := unix.SignalNum(e.Signal); n != 0 {
		return strconv.Itoa(128 + int(n))
	}
	return ""
}
