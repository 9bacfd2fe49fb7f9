package record

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one record line: a Reader's memory is this and its
// buffer, whatever the size of the file.
const MaxLineBytes = 64 << 20

// Reader reads a record's events one by one and verifies the chain as it
// goes: every event Next returns is one the chain vouches for, so the
// exports never show a record that was changed. Its memory does not grow
// with the file.
//
// Next returns io.EOF after the end record, an *IncompleteError when the
// record ends before it (a partial last line included), a *CorruptError
// at the first record that is not the writer's, ErrKeyRequired for a
// keyed record read without its key. An error is final.
type Reader struct {
	br     *bufio.Reader
	closer io.Closer
	key    []byte

	ch      *chain
	line    []byte
	n       uint64
	rep     Report
	lastSeq uint64
	err     error
}

// Report is how far a Reader (or Verify) got.
type Report struct {
	// First is the number of the first record read: 1, or the
	// checkpoint's number when the oldest segments were cut.
	First uint64
	// Records is the number of the last record verified, counted in the
	// whole chain (so a record cut at a checkpoint counts the records cut
	// too); 0 when none verified.
	Records uint64
	// Last is the hex of the last verified record's chain hash.
	Last string
	// Closed says the end record is there, counting the records before it.
	Closed bool
	// Keyed says the chain is an HMAC under a key.
	Keyed bool
	// FromCheckpoint says the record begins at a checkpoint: what came
	// before it was cut, and the chain verifies from there.
	FromCheckpoint bool
}

// NewReader reads a record from r, verifying its chain with key (nil for
// a plain chain).
func NewReader(r io.Reader, key []byte) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), key: key}
}

// Open reads the record at path: its segments that remain, in order
// (segments.go), one file open at a time.
func Open(path string, key []byte) (*Reader, error) {
	paths, err := Segments(path)
	if err != nil {
		return nil, err
	}
	s := &segmentReader{paths: paths}
	r := NewReader(s, key)
	r.closer = s
	return r, nil
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Report says how far the reader has verified.
func (r *Reader) Report() Report { return r.rep }

// Next returns the next event (see Reader for its errors).
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	ev, err := r.next()
	if err != nil {
		r.err = err
	}
	return ev, err
}

var errPartial = errors.New("partial line")

func (r *Reader) next() (Event, error) {
	line, err := r.readLine()
	num := r.n + 1
	switch {
	case r.rep.Closed && err == io.EOF:
		return Event{}, io.EOF
	case r.rep.Closed && err == nil, r.rep.Closed && err == errPartial:
		return Event{}, &CorruptError{Record: num, Reason: "bytes after the end record"}
	case err == io.EOF, err == errPartial:
		return Event{}, &IncompleteError{Verified: r.n}
	case err != nil:
		return Event{}, err
	}
	h, e, ok := splitLine(line)
	if !ok {
		return Event{}, &CorruptError{Record: num, Reason: "not a record line"}
	}
	var ev Event
	if r.ch == nil {
		if err := json.Unmarshal(e, &ev); err != nil {
			return Event{}, &CorruptError{Record: num, Reason: "event: " + err.Error()}
		}
		if err := r.begin(&ev); err != nil {
			return Event{}, err
		}
		num = r.rep.First
	}
	before := r.ch.prev
	if r.ch.next(e) != h {
		return Event{}, &CorruptError{Record: num, Reason: "hash mismatch"}
	}
	if num != r.rep.First {
		if err := json.Unmarshal(e, &ev); err != nil {
			return Event{}, &CorruptError{Record: num, Reason: "event: " + err.Error()}
		}
		if reason := r.check(&ev, num, before); reason != "" {
			return Event{}, &CorruptError{Record: num, Reason: reason}
		}
	}
	r.n = num
	r.rep.Records = num
	r.rep.Last = hex.EncodeToString(h[:])
	if ev.Kind == KindEnd {
		r.rep.Closed = true
	}
	if ev.Raw != nil {
		ev.Data, ev.Raw = string(ev.Raw), nil
	}
	return ev, nil
}

// begin reads the first record: a start, or a checkpoint where the
// oldest segments were cut. It sets up the chain.
func (r *Reader) begin(ev *Event) error {
	prev := [HashSize]byte{}
	first := uint64(1)
	switch ev.Kind {
	case KindStart:
		r.rep.Keyed = ev.Start != nil && ev.Start.Keyed
	case KindCheckpoint:
		cp := ev.Checkpoint
		if cp == nil || cp.Record < 2 {
			return &CorruptError{Record: 1, Reason: "a checkpoint without its place in the chain"}
		}
		if len(cp.Prev) != 2*HashSize {
			return &CorruptError{Record: cp.Record, Reason: "checkpoint: bad prev hash"}
		}
		if _, err := hex.Decode(prev[:], []byte(cp.Prev)); err != nil {
			return &CorruptError{Record: cp.Record, Reason: "checkpoint: bad prev hash"}
		}
		first = cp.Record
		r.rep.Keyed = cp.Keyed
		r.rep.FromCheckpoint = true
	default:
		return &CorruptError{Record: 1, Reason: fmt.Sprintf("the first record is %q, not a start or checkpoint", ev.Kind)}
	}
	switch {
	case r.rep.Keyed && r.key == nil:
		return ErrKeyRequired
	case !r.rep.Keyed && r.key != nil:
		return &CorruptError{Record: first, Reason: "a key was given, but the chain is not keyed"}
	}
	r.rep.First = first
	r.lastSeq = ev.Seq
	r.ch = newChain(r.key, prev)
	return nil
}

// check holds a record after the first to the chain's rules, returning
// what is wrong ("" for nothing). The hash already matched: these catch a
// writer that broke the rules, or a chain forged whole.
func (r *Reader) check(ev *Event, num uint64, prev [HashSize]byte) string {
	switch ev.Kind {
	case KindStart:
		return "a second start record"
	case KindCheckpoint:
		if ev.Checkpoint == nil || ev.Checkpoint.Record != num {
			return "a checkpoint out of its place"
		}
		if ev.Checkpoint.Prev != hex.EncodeToString(prev[:]) {
			return "the checkpoint's prev is not the chain's hash before it"
		}
		if ev.Seq != r.lastSeq {
			return fmt.Sprintf("seq %d, want %d", ev.Seq, r.lastSeq)
		}
	case KindEnd:
		if ev.Count != num-1 {
			return fmt.Sprintf("the end record counts %d records, the chain has %d", ev.Count, num-1)
		}
		if ev.Seq != r.lastSeq {
			return fmt.Sprintf("seq %d, want %d", ev.Seq, r.lastSeq)
		}
	default:
		if ev.Seq != r.lastSeq+1 {
			return fmt.Sprintf("seq %d, want %d", ev.Seq, r.lastSeq+1)
		}
		r.lastSeq = ev.Seq
	}
	return ""
}

// readLine returns the next line without its newline, reusing r.line:
// io.EOF at the end, errPartial for bytes without a newline at the end.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		if len(r.line)+len(frag) > MaxLineBytes {
			return nil, &CorruptError{Record: r.n + 1, Reason: fmt.Sprintf("a line longer than %d bytes", MaxLineBytes)}
		}
		switch {
		case err == nil:
			if len(r.line) == 0 {
				return frag[:len(frag)-1], nil
			}
			r.line = append(r.line, frag[:len(frag)-1]...)
			return r.line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.line = append(r.line, frag...)
		case errors.Is(err, io.EOF):
			if len(r.line)+len(frag) == 0 {
				return nil, io.EOF
			}
			return nil, errPartial
		default:
			return nil, fmt.Errorf("record: %w", err)
		}
	}
}
