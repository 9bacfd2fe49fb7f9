package record

// The writer's goroutine and its group commits: each group encoded into the
// chain's records, written in one write, synced, and cut into a new segment
// when it reaches the cap.

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// run is the writing goroutine: it writes each group when it is due,
// and what is left when the writer closes.
func (w *Writer) run() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for !w.closing && (!w.due || len(w.queue) == 0) {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		closing, n := w.closing, len(w.queue)
		w.mu.Unlock()
		if n == 0 && closing {
			return
		}
		w.commit()
	}
}

// commit writes everything queued as one group (nothing once the writer
// failed), under wmu: the group is taken after any group being written
// before it, so records keep the order they were appended in.
func (w *Writer) commit() {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	batch := w.queue
	w.queue = w.spare[:0]
	w.due = false
	w.linger.Stop()
	failed := w.err != nil
	w.mu.Unlock()
	if len(batch) == 0 {
		w.spare = batch
		return
	}
	var err error
	if !failed {
		err = w.writeBatch(batch)
	}
	size := 0
	for _, ev := range batch {
		size += eventSize(ev)
	}
	w.mu.Lock()
	w.written += uint64(len(batch))
	w.queued -= size
	if err != nil && w.err == nil {
		w.err = err
	}
	close(w.progress)
	w.progress = make(chan struct{})
	w.mu.Unlock()
	clear(batch)
	w.spare = batch
}

// writeBatch encodes a group into w.buf, record after record, starting a
// segment at each checkpoint, and writes it; it keeps what the summary
// and the next segment's start need (size, term, the last seq).
func (w *Writer) writeBatch(batch []Event) error {
	w.buf = w.buf[:0]
	for _, ev := range batch {
		if ev.Kind == KindCheckpoint {
			// The caller's screen: the next segment begins here.
			if err := w.rotate(ev.Checkpoint); err != nil {
				return err
			}
			continue
		}
		if err := w.appendRecord(ev); err != nil {
			return err
		}
		switch ev.Kind {
		case KindStart:
			w.rows, w.cols = ev.Rows, ev.Cols
			if ev.Start != nil {
				w.term = ev.Start.Term
				w.start = *ev.Start
			}
			w.began = ev.Wall
		case KindResize:
			w.rows, w.cols = ev.Rows, ev.Cols
		}
		w.lastSeq, w.lastMono = ev.Seq, ev.Mono
	}
	return w.write()
}

// appendRecord encodes ev as the chain's next record into w.buf, first
// starting a new segment when the record would pass the current one's
// size.
func (w *Writer) appendRecord(ev Event) error {
	if ev.Data != "" && !utf8.ValidString(ev.Data) {
		ev.Raw, ev.Data = []byte(ev.Data), ""
	}
	if ev.Kind == KindStart {
		s := Start{}
		if ev.Start != nil {
			s = *ev.Start
		}
		s.Keyed = w.opts.Key != nil
		ev.Start = &s
	}
	e, err := appendEvent(w.ebuf[:0], &ev)
	if err != nil {
		return fmt.Errorf("record: encoding event %d: %w", ev.Seq, err)
	}
	w.ebuf = e
	// The end record never starts a segment: its count is of the records
	// before it, a checkpoint included.
	if size := w.segBytes + int64(len(w.buf)+frameLen+len(e)); w.opts.MaxBytes > 0 && ev.Kind != KindEnd &&
		w.segBytes+int64(len(w.buf)) > 0 && size > w.opts.SegmentBytes {
		if !w.opts.Screens || size > 2*w.opts.SegmentBytes && !w.claimed.Load() {
			if err := w.rotate(nil); err != nil {
				return err
			}
		} else if !w.claimed.Load() {
			w.wantScreen.Store(true)
		}
	}
	w.records++
	w.buf = appendLine(w.buf, w.ch.next(e), e)
	return nil
}

// rotate writes what is buffered, closes the segment, starts the next
// with a checkpoint (with the caller's screen, when screen is set), and
// removes the oldest segments over the cap.
func (w *Writer) rotate(screen *Checkpoint) error {
	w.wantScreen.Store(false)
	if screen != nil {
		w.claimed.Store(false)
	}
	if w.opts.MaxBytes <= 0 {
		return nil // no segments: a screen is not needed
	}
	if err := w.write(); err != nil {
		return err
	}
	if err := w.sync(); err != nil {
		return err
	}
	w.segment++
	path := segmentPath(w.path, w.segment)
	f, err := createFile(path)
	if err != nil {
		return err
	}
	w.file, w.segBytes = f, 0
	w.kept = append(w.kept, keptSegment{path: path})
	cp := &Checkpoint{
		Prev:   hex.EncodeToString(w.ch.prev[:]),
		Record: w.records + 1,
		Keyed:  w.opts.Key != nil,
		Term:   w.term,
		// A cut removes the start: the checkpoint says what it said.
		Session: w.start.Session,
		Name:    w.start.Name,
		Owner:   w.start.Owner,
		Began:   w.began,
	}
	if screen != nil {
		cp.Screen, cp.Cursor, cp.Alt, cp.Hidden, cp.Margins = screen.Screen, screen.Cursor, screen.Alt, screen.Hidden, screen.Margins
	}
	e, err := json.Marshal(Event{Seq: w.lastSeq, Mono: w.lastMono, Wall: w.opts.Clock(), Kind: KindCheckpoint,
		Rows: w.rows, Cols: w.cols, Checkpoint: cp})
	if err != nil {
		return fmt.Errorf("record: encoding checkpoint: %w", err)
	}
	w.records++
	w.buf = appendLine(w.buf, w.ch.next(e), e)
	w.cut()
	return nil
}

// cut removes the oldest segments while the closed ones and a full new
// one would pass MaxBytes; the current segment stays. (A single record
// larger than a segment can still pass the cap by its size.)
func (w *Writer) cut() {
	total := w.opts.SegmentBytes
	for _, s := range w.kept[:len(w.kept)-1] {
		total += s.size
	}
	for total > w.opts.MaxBytes && len(w.kept) > 1 {
		old := w.kept[0]
		if err := os.Remove(old.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			w.opts.Log.Warn().Err(err).Str("segment", old.path).Msg("record: cannot remove the oldest segment")
			return
		}
		w.kept = w.kept[1:]
		total -= old.size
	}
}

// write writes w.buf to the file (or io.Writer).
func (w *Writer) write() error {
	if len(w.buf) == 0 {
		return nil
	}
	out := w.out
	if out == nil {
		out = w.file
	}
	n, err := out.Write(w.buf)
	w.segBytes += int64(n)
	if len(w.kept) > 0 {
		w.kept[len(w.kept)-1].size += int64(n)
	}
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// sync makes what is written durable: the file and its folder, or the
// io.Writer's Sync when it has one. It closes the file.
func (w *Writer) sync() error {
	if w.file == nil {
		if s, ok := w.out.(interface{ Sync() error }); ok {
			if err := s.Sync(); err != nil {
				return fmt.Errorf("record: %w", err)
			}
		}
		return nil
	}
	err := w.file.Sync()
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	w.file = nil
	if derr := syncDir(filepath.Dir(w.path)); err == nil {
		err = derr
	}
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}
