package local

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// Record configures the sessions' records: with Dir set, every session's
// event stream is written to a record file there (package record: a hash
// chain, keyed with Key when set), closed and synced when the session
// closes, its end in CloseReport.Recording.
type Record struct {
	// Dir is the recording folder; it is created 0700, and one that group
	// or others can use is refused (record.OpenDir). Empty: no records.
	Dir string
	// Key keys the chain (HMAC-SHA-256): only its holder could have
	// written a record that verifies under it.
	Key []byte
	// MaxBytes caps one session's record, cut by segments (0: no cap).
	MaxBytes int64
	// MaxTotal caps the bytes of all the records in Dir, this backend's
	// and others' (0: no cap). Whenever one of its records opens or
	// closes, the backend removes the records written longest ago until
	// the rest fit, never one still being written (record.Prune). Only
	// this Backend's own records are known to be open: one another
	// Backend (or process) writes in Dir is spared while it was written
	// within record.UnclosedGrace.
	MaxTotal int64
	// MaxAge removes the records in Dir last written longer ago, at the
	// same moments and with the same care (0: no cap).
	MaxAge time.Duration
	// Host names this machine in the reports.
	Host string
}

// recordSink is a record.Writer as the stream's sink.
type recordSink struct {
	w    *record.Writer
	host string
	path string // the record's first segment
	key  []byte
	// closed runs once the writer is closed: the record is no longer
	// this backend's to keep.
	closed func()
}

// openStream starts a session's stream with its start event, and its
// record when the backend records.
func (b *Backend) openStream(spec messages.SpawnSpec) (*stream, error) {
	start := record.Event{
		Kind: record.KindStart, Rows: int(b.opts.Rows), Cols: int(b.opts.Cols),
		Start: &record.Start{Session: string(spec.SessionID), Name: spec.Name, Owner: spec.Owner.Label(), Host: b.opts.Record.Host, Term: b.term(), Shell: b.opts.Shell},
	}
	if spec.RecordAs != "" {
		start.Start.Session = string(spec.RecordAs)
	}
	rc := b.opts.Record
	if rc.Dir == "" {
		return newStream(nil, nil, start), nil
	}
	if err := record.OpenDir(rc.Dir); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%s.rec", safeName(start.Start.Session), time.Now().UTC().Format("20060102T150405.000000000Z"))
	// Room is made before the record exists, so the new one is never
	// what the cap removes.
	b.prune()
	b.records.add(name)
	w, err := record.NewWriter(filepath.Join(rc.Dir, name), record.Options{Key: rc.Key, MaxBytes: rc.MaxBytes, Screens: true, Log: b.opts.Log})
	if err != nil {
		b.records.remove(name)
		return nil, fmt.Errorf("ptyactor: open the session's record: %w", err)
	}
	closed := func() {
		b.records.remove(name)
		b.prune()
	}
	return newStream(nil, &recordSink{w: w, host: rc.Host, path: w.Path(), key: rc.Key, closed: closed}, start), nil
}

// openRecords is the records a backend is writing, by name in the
// folder: its prunes never remove them, whatever their age or tail.
type openRecords struct {
	mu    sync.Mutex
	names map[string]struct{}
	// pruning makes the backend's prunes one at a time: two at once
	// would each count the same record's bytes as theirs to free, and
	// remove more than the cap asks.
	pruning sync.Mutex
}

func (o *openRecords) add(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.names == nil {
		o.names = map[string]struct{}{}
	}
	o.names[name] = struct{}{}
}

func (o *openRecords) remove(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.names, name)
}

func (o *openRecords) has(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.names[name]
	return ok
}

// prune holds the recording folder to Record.MaxTotal and MaxAge. It is
// a listing, a read of a few tails and the removes: cheap enough to run
// in a spawn and a close, and never on the output's path. What it
// removes is logged; a failure is logged and the session goes on.
func (b *Backend) prune() {
	rc := b.opts.Record
	if rc.Dir == "" || rc.MaxTotal <= 0 && rc.MaxAge <= 0 {
		return
	}
	b.records.pruning.Lock()
	defer b.records.pruning.Unlock()
	rep, err := record.Prune(rc.Dir, record.Retention{MaxTotal: rc.MaxTotal, MaxAge: rc.MaxAge}, b.records.has, time.Now())
	for _, p := range rep.Removed {
		why := "total"
		if p.Expired {
			why = "age"
		}
		b.opts.Log.Info().Str("record", p.Name).Int64("bytes", p.Bytes).Time("modified", p.Modified).
			Str("cap", why).Msg("removed a record over the folder's cap")
	}
	if err != nil {
		b.opts.Log.Warn().Err(err).Str("dir", rc.Dir).Msg("could not hold the recording folder to its caps")
	}
}

// term is the TERM the shells get.
func (b *Backend) term() string {
	if t, ok := b.opts.Env["TERM"]; ok {
		return t
	}
	if b.opts.Defaults != nil {
		return b.opts.Defaults["TERM"]
	}
	return AgentDefaults()["TERM"]
}

// safeName keeps a session id fit for a file name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, id)
}
