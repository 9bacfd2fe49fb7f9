package local

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/secretshape"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// stream is the session's one numbered event stream: output as the pump
// read it (the prompt marker taken out), input as it was written, resizes,
// the prompt's exit codes, the shell's exit, and what the runtime adds
// (Note: sends, settles, marks, signals). It assigns the sequence where the
// bytes arrive, under its own lock, so output never crosses an actor
// mailbox to be numbered, and an event the runtime adds takes the next
// number after the output it follows. The newest events stay in memory
// (a ring bounded in bytes) whether or not a record is written; a sink, when
// set, gets every event in order.
type stream struct {
	now   func() time.Time
	start time.Time

	mu    sync.Mutex
	seq   uint64
	ring  []record.Event // the newest events, oldest first
	bytes int            // the text ring holds
	limit int            // ring's bound on bytes
	sink  *recordSink    // nil: nothing recorded
	// sinkErr is the record's first failure: the session runs on, its
	// record ends there, and the close reports it.
	sinkErr error
	marker  markerFilter
	// shownSeq is the sequence of the newest event that changed the
	// screen (output, a resize): what a screen read shows.
	shownSeq uint64
	slab     textSlab // the output events' text
	// changed is closed at the next event, for the viewers waiting for
	// one (Changed); nil while none waits. ended: the session closed, no
	// event follows.
	changed chan struct{}
	ended   bool
	// lastOutput is when the newest output came; lastInput is the
	// number of the newest input event.
	lastOutput time.Time
	lastInput  uint64
	// lastCode is the newest prompt event's exit code (prompted: one
	// came), the console's "at prompt" badge's.
	lastCode int
	prompted bool
	// screen gives the record's checkpoint the emulator's screen; it is
	// called where the caller holds the session's lock (output, resize).
	screen func() record.Event
}

// ringBytes bounds the text of the events kept in memory per session:
// enough for a viewer that reconnects to catch up; one that was gone
// longer starts again from the screen.
const ringBytes = 512 << 10

// newStream starts a stream with its start event (number 1), and a record
// when sink is set.
func newStream(now func() time.Time, sink *recordSink, start record.Event) *stream {
	if now == nil {
		now = time.Now
	}
	st := &stream{now: now, start: now(), limit: ringBytes, sink: sink}
	st.add(start)
	return st
}

// add numbers ev and hands it on; the caller holds mu.
func (st *stream) add(ev record.Event) uint64 {
	// A credential's shape never reaches the stream (a token echoed or
	// printed whole within one read; the record's docs say what else is
	// kept as printed).
	redact(&ev)
	st.seq++
	t := st.now()
	ev.Seq, ev.Mono, ev.Wall = st.seq, t.Sub(st.start), t
	st.ring = append(st.ring, ev)
	st.bytes += len(ev.Data)
	for st.bytes > st.limit && len(st.ring) > 1 {
		st.bytes -= len(st.ring[0].Data)
		st.ring[0] = record.Event{}
		st.ring = st.ring[1:]
	}
	if st.sink != nil && st.sinkErr == nil {
		// Append queues; it blocks only when the disk is far behind.
		st.sinkErr = st.sink.w.Append(ev)
	}
	if st.changed != nil {
		close(st.changed) // the viewers wake and read on their own
		st.changed = nil
	}
	return ev.Seq
}

// changedAfter returns a channel closed once the stream holds an event
// after seq, or has ended.
func (st *stream) changedAfter(seq uint64) <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.seq > seq || st.ended {
		now := make(chan struct{})
		close(now)
		return now
	}
	if st.changed == nil {
		st.changed = make(chan struct{})
	}
	return st.changed
}

// latest returns the newest event's number and when the newest output
// came.
func (st *stream) latest() (uint64, time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.seq, st.lastOutput
}

// lastExit is the newest prompt event's exit code; nil before the first.
func (st *stream) lastExit() *int {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.prompted {
		return nil
	}
	code := st.lastCode
	return &code
}

// end says no event follows: the session closed.
func (st *stream) end() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ended = true
	if st.changed != nil {
		close(st.changed)
		st.changed = nil
	}
}

// done reports whether the stream ended and holds nothing after seq.
func (st *stream) done(seq uint64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ended && st.seq <= seq
}

// redact takes credential shapes out of every text an event carries.
func redact(ev *record.Event) {
	ev.Data = secretshape.Redact(ev.Data)
	if ev.Send != nil && len(ev.Send.Lines) > 0 {
		send := *ev.Send
		send.Lines = redactAll(send.Lines)
		ev.Send = &send
	}
	if ev.Settle != nil && len(ev.Settle.Unwritten) > 0 {
		settle := *ev.Settle
		settle.Unwritten = redactAll(settle.Unwritten)
		ev.Settle = &settle
	}
}

func redactAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = secretshape.Redact(l)
	}
	return out
}

// output numbers what the pump read, without the prompt marker.
func (st *stream) output(p []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if text := st.marker.strip(p); len(text) > 0 {
		st.shownSeq = st.add(record.Event{Kind: record.KindOutput, Data: st.slab.text(text)})
		st.lastOutput = st.ring[len(st.ring)-1].Wall
		st.checkpoint()
	}
}

// checkpoint gives the record the screen after the newest event when its
// writer asks for one (a segment is full); the caller holds the session's
// lock, so the emulator shows exactly the events numbered so far.
func (st *stream) checkpoint() {
	if st.sink == nil || st.sinkErr != nil || st.screen == nil || !st.sink.w.WantsScreen() {
		return
	}
	st.sinkErr = st.sink.w.Append(st.screen())
}

// prompt numbers a verified prompt marker: its exit code, never its nonce.
func (st *stream) prompt(code int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.lastCode, st.prompted = code, true
	st.add(record.Event{Kind: record.KindPrompt, ExitCode: &code})
}

// input numbers what was written to the terminal. Written at a secret
// prompt (the terminal reads a line with echo off), only its length is
// kept.
func (st *stream) input(p []byte, source string, secret bool) {
	if len(p) == 0 {
		return
	}
	ev := record.Event{Kind: record.KindInput, Source: source, Data: string(p)}
	if secret {
		ev.Data, ev.Secret, ev.Len = "", true, len(p)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.lastInput = st.add(ev)
}

// inputs is the number of the newest input event (zero: none yet).
func (st *stream) inputs() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.lastInput
}

func (st *stream) resize(rows, cols int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.shownSeq = st.add(record.Event{Kind: record.KindResize, Rows: rows, Cols: cols})
	st.checkpoint()
}

func (st *stream) exited(status messages.SessionStatus) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.add(record.Event{Kind: record.KindExit, Exit: &record.Exit{Code: status.ExitCode, Signal: status.Signal}})
}

// note numbers an event the runtime adds.
func (st *stream) note(ev record.Event) uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.add(ev)
}

// durable returns a wait for what the stream holds to reach the record's
// file, or nil when nothing is recorded. A failed wait is the record's
// failure, which the close reports; a wait cut by its context is not.
func (st *stream) durable() func(ctx context.Context) error {
	st.mu.Lock()
	sink := st.sink
	st.mu.Unlock()
	if sink == nil {
		return nil
	}
	return func(ctx context.Context) error {
		err := sink.w.Flush(ctx)
		if err != nil && ctx.Err() == nil {
			st.mu.Lock()
			if st.sinkErr == nil {
				st.sinkErr = err
			}
			st.mu.Unlock()
		}
		return err
	}
}

// closeSink ends the record: its end record, synced. It reports where the
// record is and the end of its chain; nil when nothing was recorded.
func (st *stream) closeSink() (*messages.Recording, error) {
	st.end()
	st.mu.Lock()
	sink, failed := st.sink, st.sinkErr
	st.sink = nil
	st.mu.Unlock()
	if sink == nil {
		return nil, nil
	}
	sum, err := sink.w.Close()
	if sink.closed != nil {
		sink.closed()
	}
	if err == nil {
		err = failed
	}
	if err != nil {
		return nil, fmt.Errorf("ptyactor: the session's record: %w", err)
	}
	return &messages.Recording{Path: sum.Path, Host: sink.host, Records: sum.Records, SHA256: sum.SHA256}, nil
}

// since returns the kept events after seq, oldest first, and whether some
// after seq are no longer kept.
func (st *stream) since(seq uint64) ([]record.Event, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.ring) == 0 {
		return nil, seq < st.seq
	}
	first := st.ring[0].Seq
	lost := seq+1 < first
	i := 0
	if seq >= first {
		i = int(seq - first + 1)
	}
	if i >= len(st.ring) {
		return nil, lost
	}
	return append([]record.Event(nil), st.ring[i:]...), lost
}

// keeps reports whether the window still holds every event after seq: a
// picture that shows seq can still be followed from memory.
func (st *stream) keeps(seq uint64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.ring) == 0 {
		return seq >= st.seq
	}
	return seq+1 >= st.ring[0].Seq
}

// olderBatch bounds the text of the events one older call returns.
const olderBatch = 1 << 20

// older reads back from the record the events after seq that the window
// no longer holds, up to its start: for a viewer away longer than the
// window. The record is flushed first (its newest events may still be
// queued). False: nothing is recorded, or the record no longer reaches
// back to seq (a cap cut it).
func (st *stream) older(seq uint64) ([]record.Event, bool) {
	st.mu.Lock()
	sink := st.sink
	first := st.seq + 1
	if len(st.ring) > 0 {
		first = st.ring[0].Seq
	}
	st.mu.Unlock()
	if sink == nil || seq+1 >= first {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if sink.w.Flush(ctx) != nil {
		return nil, false
	}
	r, err := record.Open(sink.path, sink.key)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	var out []record.Event
	size := 0
	for size < olderBatch {
		ev, err := r.Next()
		if err != nil {
			break
		}
		switch {
		case ev.Kind == record.KindCheckpoint || ev.Kind == record.KindEnd:
			continue // the writer's, numbered as the event before them
		case ev.Seq <= seq:
			continue
		case len(out) == 0 && ev.Seq != seq+1:
			return nil, false // cut: the events right after seq are gone
		case ev.Seq >= first:
			return out, true // the window has the rest
		}
		out = append(out, ev)
		size += len(ev.Data)
	}
	return out, len(out) > 0
}

// shown is the sequence of the newest event the screen shows.
func (st *stream) shown() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.shownSeq
}

// textSlab holds the text of output events: each read is copied into a
// shared slab and handed out as a string over its bytes, one allocation
// per slab instead of one per read of the pump (a flood reads thousands a
// second). The bytes under a string are never written again: the slab is
// only appended to, and replaced when full; the garbage collector frees it
// with the last event that points into it. Slabs start small and double
// up to maxSlab, so an idle session holds a few KiB, a flood few
// allocations.
type textSlab struct{ buf []byte }

const (
	minSlab = 2 << 10
	maxSlab = 64 << 10
)

func (t *textSlab) text(p []byte) string {
	if len(p) > maxSlab/4 {
		return string(p)
	}
	if cap(t.buf)-len(t.buf) < len(p) {
		size := min(max(2*cap(t.buf), minSlab), maxSlab)
		t.buf = make([]byte, 0, max(size, len(p)))
	}
	start := len(t.buf)
	t.buf = append(t.buf, p...)
	return unsafe.String(&t.buf[start], len(p))
}

// markerFilter takes the prompt marker (OSC 133;D, with its nonce) out of
// output, across reads: a sequence split between two reads is held back
// until it ends. Every such OSC goes, the shell's and any a program forged:
// none belongs in a record, and the shell's carries the nonce.
type markerFilter struct {
	held []byte // an ESC that may start a marker, and what followed it
	in   bool   // inside a marker: drop until its terminator
}

var markerStart = []byte("\x1b]" + markerPrefix)

// markerMax bounds a marker: the shell's is "ESC ] 133;D;<status>;<24 hex
// digits> BEL", under 50 bytes. Past the bound, what was held is not the
// shell's marker and is output after all.
const markerMax = 128

func (f *markerFilter) strip(p []byte) []byte {
	if len(f.held) == 0 && !f.in && bytes.IndexByte(p, 0x1b) < 0 {
		return p
	}
	var out []byte
	for _, c := range p {
		switch {
		case f.in:
			f.held = append(f.held, c)
			if c == 0x07 || (c == '\\' && len(f.held) >= 2 && f.held[len(f.held)-2] == 0x1b) {
				f.held, f.in = f.held[:0], false
			} else if len(f.held) > markerMax {
				out, f.held, f.in = append(out, f.held...), f.held[:0], false
			}
		case len(f.held) > 0 || c == 0x1b:
			f.held = append(f.held, c)
			switch {
			case bytes.Equal(f.held, markerStart):
				f.in = true
			case !bytes.HasPrefix(markerStart, f.held) && c == 0x1b:
				// Not a marker, but this ESC may start one.
				out, f.held = append(out, f.held[:len(f.held)-1]...), append(f.held[:0], c)
			case !bytes.HasPrefix(markerStart, f.held):
				out, f.held = append(out, f.held...), f.held[:0]
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

var _ backend.Recorder = (*session)(nil)

// Note numbers an event the runtime adds to the session's stream. A send
// that starts while the terminal reads with echo off (a password prompt)
// is kept as the length of its text only, as its input is.
func (s *session) Note(ev record.Event) uint64 {
	if ev.Kind == record.KindSend && ev.Send != nil && len(ev.Send.Lines) > 0 && s.secretMode() {
		n := len(ev.Send.Lines) - 1 // the line ends
		for _, l := range ev.Send.Lines {
			n += len(l)
		}
		send := *ev.Send
		send.Lines = nil
		ev.Send, ev.Secret, ev.Len = &send, true, n
	}
	return s.stream.note(ev)
}

// Durable implements backend.Recorder.
func (s *session) Durable() func(ctx context.Context) error { return s.stream.durable() }

// Events returns the session's kept events after seq, oldest first, and
// whether some after seq are no longer kept.
func (s *session) Events(seq uint64) ([]record.Event, bool) { return s.stream.since(seq) }
