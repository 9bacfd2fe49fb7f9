package record

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultQueueBytes is the queue's byte budget when Options.QueueBytes is
// zero: a few seconds of a flood of output on a slow disk.
const DefaultQueueBytes = 8 << 20

// The writer commits in groups: what is appended waits in the queue until
// a Flush asks for it, commitBytes are queued, or DefaultLinger has passed
// since the first of them, and then goes out in one write. A session's
// events come in bursts of small ones (a command's echo, its output, the
// prompt, the send's start and settle); writing each as it came would cost
// a wake-up of the writer and a system call apiece, on the cores the
// session's programs run on. A Flush writes the group itself, so a send's
// settle costs no wake-up of the writer at all. A crash loses at most the
// linger's events after the last flush, and every settle is flushed (the
// send's result waits for it).
const (
	DefaultLinger = 50 * time.Millisecond
	commitBytes   = 256 << 10
)

// Options configure a Writer. The zero value writes a plain SHA-256 chain
// to one file without a cap.
type Options struct {
	// Key, when set, makes the chain an HMAC-SHA-256 under it, so that
	// only its holder could have written a chain that verifies.
	Key []byte
	// Clock gives the wall time of the records the writer makes itself
	// (checkpoints, the end); time.Now when nil. The caller's events carry
	// their own times.
	Clock func() time.Time
	// MaxBytes, when positive, caps the record's files (a Writer on a
	// path only): the record is cut into segments of SegmentBytes and the
	// oldest are removed when the total would pass it (segments.go).
	MaxBytes int64
	// SegmentBytes is a segment's size; MaxBytes/4 when zero.
	SegmentBytes int64
	// QueueBytes is the byte budget of the events appended and not yet
	// written; DefaultQueueBytes when zero. Append blocks only beyond it.
	QueueBytes int
	// Linger is how long appended events may wait to be written with
	// those that follow them; DefaultLinger when zero.
	Linger time.Duration
	// Screens says the caller gives the checkpoints their screens: once
	// WantsScreen reports true, it appends a KindCheckpoint event holding
	// the terminal's screen after everything it appended before, and the
	// next segment begins there. Only the caller knows which screen
	// follows which event: the writer runs behind it. A segment that
	// reaches twice its size while no screen was claimed (the caller
	// printed nothing since) begins with a checkpoint that has no screen;
	// once claimed, the segment waits for it.
	Screens bool
	// Log receives what no caller can be told: a segment the cap could
	// not remove. The zero Logger discards.
	Log zerolog.Logger
}

// Summary is what a closed record ends with: the hash and count that
// anchor the chain outside the file (ptyrec verify -expect).
type Summary struct {
	// Path is the record's path (its first segment's name); empty for a
	// Writer on an io.Writer.
	Path string
	// Records is the number of records in the chain, the end record
	// included (Count+1 of the end record).
	Records uint64
	// SHA256 is the hex of the last record's chain hash (an HMAC when
	// keyed).
	SHA256 string
}

// Writer writes a session's events as a record: a hash chain, one JSON
// line per record (chain.go). Append queues an event and returns; one
// goroutine hashes and writes what is queued, in batches, so the output
// pump never waits for the disk. Flush waits until what was appended
// before it is in the file; Close writes the end record, syncs and
// closes; it must be called, since it ends the writing goroutine.
//
// A full queue: the queue has a byte budget (Options.QueueBytes), and an
// Append beyond it blocks until the disk has taken enough. Dropping would
// keep the pump fast but leave a hole in a record meant to hold every
// byte; blocking keeps the chain whole and slows the session only when
// the disk falls a whole budget behind it (the PTY then holds the
// program's output, as it does for a slow reader). After a write error
// Append and Flush return it at once and never block.
type Writer struct {
	opts Options
	path string
	// out is the io.Writer given to NewWriterTo; nil for a file record.
	out io.Writer

	mu       sync.Mutex
	queue    []Event
	queued   int
	appended uint64
	written  uint64
	started  bool
	closing  bool
	// due: the queued group is to be written now (its linger ended, or it
	// holds commitBytes); the writing goroutine waits for it.
	due bool
	err error
	// wantScreen: the segment is full and waits for the caller's screen
	// (Options.Screens); WantsScreen claims it, and claimed holds until
	// the caller's checkpoint is written: it is on its way, behind the
	// events queued before it, so the segment waits for it however far
	// the writer runs behind, instead of starting one without a screen.
	wantScreen atomic.Bool
	claimed    atomic.Bool
	// progress is closed (and replaced) whenever written, queued or err
	// change, waking Flush and a blocked Append.
	progress chan struct{}
	wake     chan struct{}
	done     chan struct{}
	// linger is armed when the queue gets its first event; it makes the
	// group due.
	linger *time.Timer

	// wmu is held to write a group: by the writing goroutine, by a Flush
	// that writes it itself, and by Close. The fields below are its.
	wmu   sync.Mutex
	spare []Event

	closeOnce sync.Once
	summary   Summary
	closeErr  error

	// Written under wmu.
	ch       *chain
	records  uint64
	file     *os.File
	segment  int
	segBytes int64
	kept     []keptSegment
	lastSeq  uint64
	lastMono time.Duration
	rows     int
	cols     int
	term     string
	start    Start     // the start event's, for the checkpoints
	began    time.Time // the start event's time
	buf      []byte
	ebuf     []byte // one event's encoding
}

type keptSegment struct {
	path string
	size int64
}

// NewWriter creates the record file at path (mode 0600; an existing file
// is an error, never overwritten) and starts its writer. The folder
// should have been made with OpenDir.
func NewWriter(path string, opts Options) (*Writer, error) {
	f, err := createFile(path)
	if err != nil {
		return nil, err
	}
	w := newWriter(opts)
	w.path, w.file = path, f
	w.kept = []keptSegment{{path: path}}
	go w.run()
	return w, nil
}

// NewWriterTo starts a writer on out, which it never closes (Close syncs
// it when it has a Sync method). MaxBytes is ignored: segments are files.
func NewWriterTo(out io.Writer, opts Options) *Writer {
	w := newWriter(opts)
	w.out = out
	w.opts.MaxBytes = 0
	go w.run()
	return w
}

func newWriter(opts Options) *Writer {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.Linger <= 0 {
		opts.Linger = DefaultLinger
	}
	if opts.MaxBytes > 0 && opts.SegmentBytes <= 0 {
		opts.SegmentBytes = max(opts.MaxBytes/4, 1)
	}
	w := &Writer{
		opts:     opts,
		ch:       newChain(opts.Key, [HashSize]byte{}),
		progress: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	w.linger = time.AfterFunc(time.Hour, w.lingered)
	w.linger.Stop()
	return w
}

// lingered makes the queued group due when its linger ends.
func (w *Writer) lingered() {
	w.mu.Lock()
	w.due = len(w.queue) > 0
	w.mu.Unlock()
	w.poke()
}

// Append queues ev for the record. It never waits for the disk unless
// the queue is over its byte budget (see Writer). The first event must be
// KindStart (the writer sets its Keyed); KindCheckpoint and KindEnd are
// the writer's own. Append takes ev's pointed-to values: the caller must
// not change them afterwards.
func (w *Writer) Append(ev Event) error {
	size := eventSize(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		switch {
		case w.closing:
			return ErrClosed
		case w.err != nil:
			return w.err
		case !w.started && ev.Kind != KindStart:
			return ErrNoStart
		case w.started && (ev.Kind == KindStart || ev.Kind == KindEnd ||
			ev.Kind == KindCheckpoint && (!w.opts.Screens || ev.Checkpoint == nil)):
			return fmt.Errorf("%w: %s", ErrReservedKind, ev.Kind)
		}
		if w.queued == 0 || w.queued+size <= w.opts.QueueBytes {
			break
		}
		ch := w.progress
		w.mu.Unlock()
		<-ch
		w.mu.Lock()
	}
	w.started = true
	w.queue = append(w.queue, ev)
	w.queued += size
	w.appended++
	// The first event starts the group's linger; a full group is due at
	// once. Others wake nobody.
	switch {
	case w.queued >= commitBytes && !w.due:
		w.due = true
		w.poke()
	case len(w.queue) == 1:
		w.linger.Reset(w.opts.Linger)
	}
	return nil
}

// Path is the record's path (its first segment's name); empty for a
// Writer on an io.Writer.
func (w *Writer) Path() string { return w.path }

// WantsScreen reports, once, that the current segment is full and the
// next begins at the checkpoint the caller appends next (Options.Screens).
func (w *Writer) WantsScreen() bool {
	if w.wantScreen.CompareAndSwap(true, false) {
		w.claimed.Store(true)
		return true
	}
	return false
}

// poke wakes the writing goroutine; a wake-up already pending is enough.
func (w *Writer) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// eventSize is what an event counts against the queue's budget: its text
// and a bound on the rest.
func eventSize(ev Event) int {
	n := 256 + len(ev.Data)
	if ev.Send != nil {
		for _, l := range ev.Send.Lines {
			n += len(l)
		}
	}
	return n
}

// Flush returns once every event appended before it is written to the
// file (written, not synced: Close syncs), or the writer's error, or
// ctx's when it ends first. A send's result waits for it, so the record
// always holds what a caller was told.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	target := w.appended
	pending := w.written < target && w.err == nil
	w.mu.Unlock()
	if pending && ctx.Err() == nil {
		// Written here, not by waking the writer: a send's result waits.
		w.commit()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.written < target && w.err == nil {
		ch := w.progress
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			w.mu.Lock()
			return ctx.Err()
		}
		w.mu.Lock()
	}
	return w.err
}

// Close writes what is queued and the end record, syncs and closes the
// file (and syncs its folder). It returns the chain's summary; a second
// call returns the first's answer.
func (w *Writer) Close() (Summary, error) {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closing = true
		started := w.started
		w.mu.Unlock()
		w.poke()
		<-w.done
		w.linger.Stop()
		w.wmu.Lock()
		defer w.wmu.Unlock()
		w.mu.Lock()
		err := w.err
		w.mu.Unlock()
		if err == nil && !started {
			err = ErrNoStart
		}
		if err == nil {
			end := Event{Seq: w.lastSeq, Mono: w.lastMono, Wall: w.opts.Clock(), Kind: KindEnd, Count: w.records}
			w.buf = w.buf[:0]
			if err = w.appendRecord(end); err == nil {
				err = w.write()
			}
		}
		if serr := w.sync(); err == nil {
			err = serr
		}
		w.summary = Summary{Path: w.path, Records: w.records, SHA256: hex.EncodeToString(w.ch.prev[:])}
		w.closeErr = err
	})
	return w.summary, w.closeErr
}
