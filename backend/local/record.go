package local

import (
	"fmt"
	"path/filepath"
	"strings"
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
	// Host names this machine in the reports.
	Host string
}

// recordSink is a record.Writer as the stream's sink.
type recordSink struct {
	w    *record.Writer
	host string
}

// openStream starts a session's stream with its start event, and its
// record when the backend records.
func (b *Backend) openStream(spec messages.SpawnSpec) (*stream, error) {
	start := record.Event{
		Kind: record.KindStart, Rows: int(b.opts.Rows), Cols: int(b.opts.Cols),
		Start: &record.Start{Session: string(spec.SessionID), Host: b.opts.Record.Host, Term: b.term(), Shell: b.opts.Shell},
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
	w, err := record.NewWriter(filepath.Join(rc.Dir, name), record.Options{Key: rc.Key, MaxBytes: rc.MaxBytes, Log: b.opts.Log})
	if err != nil {
		return nil, fmt.Errorf("ptyactor: open the session's record: %w", err)
	}
	return newStream(nil, &recordSink{w: w, host: rc.Host}, start), nil
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
