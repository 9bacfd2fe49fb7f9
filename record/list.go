package record

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ErrNoFolder: List was given a records folder that does not exist (or
// is not a folder). It comes with fs.ErrNotExist when nothing is there.
var ErrNoFolder = errors.New("record: no such records folder")

// State is what a listing found of a record's chain.
type State string

// States of a listed record.
const (
	// StateVerified: the chain verifies and is closed by its end record.
	StateVerified State = "verified"
	// StateIncomplete: what is there verifies, but the end record is
	// missing: the writer is still writing it, or stopped (a crash).
	StateIncomplete State = "incomplete"
	// StateCorrupt: a record is not the chain its writer wrote.
	StateCorrupt State = "corrupt"
	// StateKeyed: a keyed chain, listed without its key: not verified.
	StateKeyed State = "keyed"
)

// Listing is one record of a folder as List found it.
type Listing struct {
	// Path is the record's name, its first segment's (which a cut may
	// have removed; Open reads the segments that remain): the FILE
	// ptyrec reads.
	Path string
	// Session, Name and Owner are the session's id, display name and
	// owner's label, as the record's start says them ("" when not
	// recorded).
	Session, Name, Owner string
	// Start is the session's start; Duration runs from it to the last
	// event read.
	Start    time.Time
	Duration time.Duration
	// Bytes is the size of every segment together.
	Bytes int64
	State State
	// Err is why the state is not StateVerified (nil when it is).
	Err error
	// Cut says the oldest segments were removed under the cap: the
	// record begins at a checkpoint.
	Cut bool

	first string // the first segment that remains
}

// List reads every record in dir (a .rec file and its segments), each
// verified to its end with key (nil: plain chains; a keyed one is listed
// StateKeyed, unverified), newest start first. A record that does not
// verify is listed with its state and error, not dropped: List fails
// only when dir cannot be read (ErrNoFolder when it does not exist).
// Memory does not grow with a record's length: events are read one at a
// time.
func List(dir string, key []byte) ([]Listing, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s (%w)", ErrNoFolder, dir, err)
	case err != nil:
		return nil, fmt.Errorf("record: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%w: %s is not a folder", ErrNoFolder, dir)
	}
	recs, err := listRecords(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Listing, 0, len(recs))
	for _, fr := range recs {
		l := Listing{Path: filepath.Join(dir, fr.name), Bytes: fr.bytes, first: fr.segs[0].path}
		l.read(key)
		if l.Start.IsZero() {
			l.Start = fr.modified
		}
		out = append(out, l)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Start.Equal(out[b].Start) {
			return out[a].Start.After(out[b].Start)
		}
		return out[a].Path < out[b].Path
	})
	return out, nil
}

// read verifies l's record and fills in what its events say.
func (l *Listing) read(key []byte) {
	r, err := Open(l.Path, key)
	if err != nil {
		l.State, l.Err = StateCorrupt, err
		return
	}
	defer r.Close()
	var last time.Time
	for n := 0; ; n++ {
		ev, err := r.Next()
		if err != nil {
			var ie *IncompleteError
			switch {
			case errors.Is(err, io.EOF):
				l.State = StateVerified
			case errors.As(err, &ie):
				l.State, l.Err = StateIncomplete, err
			case errors.Is(err, ErrKeyRequired):
				l.State, l.Err = StateKeyed, err
				l.peek()
			default:
				l.State, l.Err = StateCorrupt, err
			}
			break
		}
		if n == 0 {
			l.begin(ev)
		}
		// The end and checkpoints are the writer's, stamped by its clock:
		// the session's last event is the last of the session's own.
		if ev.Kind != KindEnd && ev.Kind != KindCheckpoint && !ev.Wall.IsZero() {
			last = ev.Wall
		}
	}
	if !l.Start.IsZero() && last.After(l.Start) {
		l.Duration = last.Sub(l.Start)
	}
}

// begin takes the session's details from the record's first event.
func (l *Listing) begin(ev Event) {
	switch {
	case ev.Kind == KindStart && ev.Start != nil:
		l.Session, l.Name, l.Owner, l.Start = ev.Start.Session, ev.Start.Name, ev.Start.Owner, ev.Wall
	case ev.Kind == KindCheckpoint && ev.Checkpoint != nil:
		cp := ev.Checkpoint
		l.Session, l.Name, l.Owner, l.Start, l.Cut = cp.Session, cp.Name, cp.Owner, cp.Began, true
		if l.Start.IsZero() {
			l.Start = ev.Wall
		}
	}
}

// peek reads a keyed record's first event without its key, for its
// session's details only: nothing of it is verified (State says so).
func (l *Listing) peek() {
	f, err := os.Open(l.first)
	if err != nil {
		return
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil {
		return
	}
	if _, e, ok := splitLine(line[:len(line)-1]); ok {
		var ev Event
		if json.Unmarshal(e, &ev) == nil {
			l.begin(ev)
		}
	}
}
