package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Retention caps a recording folder. A record is all its segment files
// (segments.go): it is removed whole, and counted whole.
type Retention struct {
	// MaxTotal caps the bytes of the folder's records (0: no cap); the
	// records written longest ago are removed first.
	MaxTotal int64
	// MaxAge removes every record last written longer ago (0: no cap).
	MaxAge time.Duration
}

// UnclosedGrace is how long a record without its end record is taken for
// one another process is still writing. Past it, unwritten all that time,
// it is taken for a crashed writer's and may be removed. A session idle
// that long in another process looks the same: the grace is the bound on
// how idle a session's record can be and still be spared.
const UnclosedGrace = 10 * time.Minute

// Pruned is a record Prune removed.
type Pruned struct {
	// Name is the record's name in its folder: its first segment's file
	// name, which need not exist any more when its oldest segments were
	// cut.
	Name string
	// Bytes is what its files held.
	Bytes int64
	// Modified is when it was last written.
	Modified time.Time
	// Expired says it was removed for its age (Retention.MaxAge), not
	// for the folder's total.
	Expired bool
}

// PruneReport is what Prune did.
type PruneReport struct {
	// Removed are the records removed, oldest first.
	Removed []Pruned
	// Total is the bytes of the records left. It can stay above MaxTotal
	// when the records still being written hold more.
	Total int64
}

// Prune holds the records in dir to p: it removes every record last
// written more than p.MaxAge before now, then the oldest until the
// records' total is at most p.MaxTotal. Only record files count (a name
// ending in ".rec", or a segment's ".rec.N"); other files and folders are
// left alone.
//
// A record still being written is never removed: one open says this
// process writes (open is given the record's Name; nil: none), and one
// without its end record last written less than UnclosedGrace ago
// (another process's). Only the tail of a record's last segment is read
// to tell.
//
// A failure to remove one record does not stop the others; the failures
// are returned joined. Of a record whose removal failed, its oldest
// segments may be gone: what remains still verifies from a checkpoint.
func Prune(dir string, p Retention, open func(name string) bool, now time.Time) (PruneReport, error) {
	recs, err := listRecords(dir)
	if err != nil {
		return PruneReport{}, err
	}
	var rep PruneReport
	for _, r := range recs {
		rep.Total += r.bytes
	}
	var errs []error
	remove := func(r *folderRecord, expired bool) {
		if r.gone || !r.removable(open, now) {
			return
		}
		freed, err := r.remove()
		rep.Total -= freed
		if err != nil {
			errs = append(errs, err)
		}
		if freed > 0 && r.gone {
			rep.Removed = append(rep.Removed, Pruned{Name: r.name, Bytes: freed, Modified: r.modified, Expired: expired})
		}
	}
	if p.MaxAge > 0 {
		for _, r := range recs {
			if now.Sub(r.modified) > p.MaxAge {
				remove(r, true)
			}
		}
	}
	if p.MaxTotal > 0 {
		for _, r := range recs {
			if rep.Total <= p.MaxTotal {
				break
			}
			remove(r, false)
		}
	}
	return rep, errors.Join(errs...)
}

// folderRecord is one record found in a folder: its segments that exist.
type folderRecord struct {
	name     string
	segs     []folderSegment // oldest first
	bytes    int64
	modified time.Time // the newest segment's
	gone     bool
}

type folderSegment struct {
	i    int
	path string
	size int64
}

// listRecords finds the records in dir, the longest unwritten first.
func listRecords(dir string) ([]*folderRecord, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	byName := map[string]*folderRecord{}
	var recs []*folderRecord
	for _, e := range ents {
		name, i, ok := recordFile(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			// Removed since the listing (a writer's cut): nothing to count.
			continue
		}
		r := byName[name]
		if r == nil {
			r = &folderRecord{name: name}
			byName[name] = r
			recs = append(recs, r)
		}
		r.segs = append(r.segs, folderSegment{i: i, path: filepath.Join(dir, e.Name()), size: fi.Size()})
		r.bytes += fi.Size()
		if fi.ModTime().After(r.modified) {
			r.modified = fi.ModTime()
		}
	}
	for _, r := range recs {
		sort.Slice(r.segs, func(a, b int) bool { return r.segs[a].i < r.segs[b].i })
	}
	sort.SliceStable(recs, func(a, b int) bool {
		if !recs[a].modified.Equal(recs[b].modified) {
			return recs[a].modified.Before(recs[b].modified)
		}
		return recs[a].name < recs[b].name
	})
	return recs, nil
}

// recordFile says whether file is a record's segment: the record's name
// and the segment's number (0 for the first).
func recordFile(file string) (name string, i int, ok bool) {
	if strings.HasSuffix(file, ".rec") {
		return file, 0, true
	}
	dot := strings.LastIndexByte(file, '.')
	if dot < 0 || !strings.HasSuffix(file[:dot], ".rec") {
		return "", 0, false
	}
	rest := file[dot+1:]
	i, err := strconv.Atoi(rest)
	if err != nil || i <= 0 || strconv.Itoa(i) != rest {
		return "", 0, false
	}
	return file[:dot], i, true
}

// removable says whether r is written by no one: not open here, and
// closed by its writer or unwritten for UnclosedGrace.
func (r *folderRecord) removable(open func(string) bool, now time.Time) bool {
	if open != nil && open(r.name) {
		return false
	}
	if now.Sub(r.modified) > UnclosedGrace {
		return true
	}
	closed, err := endsClosed(r.segs[len(r.segs)-1].path)
	return err == nil && closed
}

// remove removes r's segments, oldest first, so that a failure leaves
// the newest ones, which verify from their checkpoint. It returns the
// bytes freed. A segment already gone (its writer's cut, or another
// pruner) counts as removed.
func (r *folderRecord) remove() (int64, error) {
	var freed int64
	for k, s := range r.segs {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.segs = r.segs[k:]
			return freed, fmt.Errorf("record: %w", err)
		}
		freed += s.size
	}
	r.segs, r.gone = nil, true
	return freed, nil
}

// tailBytes is how much of a segment's end endsClosed reads: an end
// record's line is under 250 bytes (a hash, a sequence, two times, a
// count).
const tailBytes = 1 << 10

// endsClosed says whether the segment at path ends with the end record.
// It reads only the file's last tailBytes, and trusts the line's framing
// and kind without verifying the chain: it tells a finished record from
// one being written, and a forger who can write the folder could remove
// the records anyway.
func endsClosed(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("record: %w", err)
	}
	off := max(fi.Size()-tailBytes, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return false, fmt.Errorf("record: %w", err)
	}
	return lastIsEnd(buf, off == 0), nil
}

// lastIsEnd says whether tail's last line is a whole end record; whole
// says tail is the whole file, so that its first line is whole too.
func lastIsEnd(tail []byte, whole bool) bool {
	line, ok := bytes.CutSuffix(tail, []byte("\n"))
	if !ok {
		return false // a partial last line: the writer is mid-write
	}
	if nl := bytes.LastIndexByte(line, '\n'); nl >= 0 {
		line = line[nl+1:]
	} else if !whole {
		return false // longer than any end record
	}
	_, e, ok := splitLine(line)
	if !ok {
		return false
	}
	var ev struct {
		Kind Kind `json:"k"`
	}
	return json.Unmarshal(e, &ev) == nil && ev.Kind == KindEnd
}
