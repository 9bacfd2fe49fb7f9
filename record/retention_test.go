package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// folderRecordAt writes a record named name in dir, about size bytes of
// output, closed or cut before its end, and dates its files at. It
// returns the record's bytes.
func folderRecordAt(t *testing.T, dir, name string, size int, closed bool, at time.Time) int64 {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := NewWriter(path, Options{Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 1, Kind: KindStart, Start: &Start{Session: name}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 2, Kind: KindOutput, Data: strings.Repeat("x", size)}); err != nil {
		t.Fatal(err)
	}
	if closed {
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		// A writer still at work: what it appended is in the file, no end.
		flush(t, w)
		t.Cleanup(func() { _, _ = w.Close() })
	}
	return dateFiles(t, dir, name, at)
}

// dateFiles sets the times of name's files in dir to at, and returns
// their bytes.
func dateFiles(t *testing.T, dir, name string, at time.Time) int64 {
	t.Helper()
	var total int64
	files := append(globT(t, filepath.Join(dir, name)), globT(t, filepath.Join(dir, name+".*"))...)
	if len(files) == 0 {
		t.Fatalf("no files of %s", name)
	}
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

func globT(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// left lists the files in dir.
func left(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func removedNames(rep PruneReport) []string {
	var names []string
	for _, p := range rep.Removed {
		names = append(names, p.Name)
	}
	return names
}

// The total cap removes the records written longest ago first, until the
// rest fit, and reports each with its bytes.
func TestPruneTotal(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var sizes []int64
	for i := range 4 {
		sizes = append(sizes, folderRecordAt(t, dir, fmt.Sprintf("r%d.rec", i), 1000, true, now.Add(-time.Duration(4-i)*time.Hour)))
	}
	// Room for the two newest only.
	limit := sizes[2] + sizes[3]
	rep, err := Prune(dir, Retention{MaxTotal: limit}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := removedNames(rep); !slices.Equal(got, []string{"r0.rec", "r1.rec"}) {
		t.Fatalf("removed %v, want r0 and r1", got)
	}
	if rep.Removed[0].Bytes != sizes[0] || rep.Removed[0].Expired || rep.Total != limit {
		t.Fatalf("report %+v, want r0's %d bytes and %d left", rep, sizes[0], limit)
	}
	if got := left(t, dir); !slices.Equal(got, []string{"r2.rec", "r3.rec"}) {
		t.Fatalf("left %v", got)
	}
	// Under the cap: nothing more goes.
	if rep, err := Prune(dir, Retention{MaxTotal: limit}, nil, now); err != nil || len(rep.Removed) != 0 {
		t.Fatalf("a second prune: %+v, %v", rep, err)
	}
}

// The age cap removes every record last written longer ago, whatever the
// total; a capped record's segments go together.
func TestPruneAge(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := filepath.Join(dir, "old.rec")
	w, err := NewWriter(old, Options{Clock: fixedClock, MaxBytes: 8 << 10, SegmentBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Seq: 1, Kind: KindStart}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := w.Append(Event{Seq: uint64(i + 2), Kind: KindOutput, Data: fmt.Sprintf("line %d\r\n", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the record's first segment should have been cut: %v", err)
	}
	dateFiles(t, dir, "old.rec", now.Add(-48*time.Hour))
	folderRecordAt(t, dir, "new.rec", 10, true, now.Add(-time.Hour))

	rep, err := Prune(dir, Retention{MaxAge: 24 * time.Hour}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 1 || rep.Removed[0].Name != "old.rec" || !rep.Removed[0].Expired {
		t.Fatalf("removed %+v, want old.rec for its age", rep.Removed)
	}
	if got := left(t, dir); !slices.Equal(got, []string{"new.rec"}) {
		t.Fatalf("left %v", got)
	}
}

// A record still being written stays, however old or large: one this
// process holds open, and one without its end record written within the
// grace. One without its end unwritten past the grace was a crashed
// writer's, and goes.
func TestPruneSkipsWritten(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	folderRecordAt(t, dir, "open.rec", 1000, true, now.Add(-72*time.Hour))
	folderRecordAt(t, dir, "fresh.rec", 1000, false, now.Add(-UnclosedGrace/2))
	folderRecordAt(t, dir, "crashed.rec", 1000, false, now.Add(-UnclosedGrace-time.Minute))
	folderRecordAt(t, dir, "closed.rec", 1000, true, now.Add(-UnclosedGrace/2))

	open := func(name string) bool { return name == "open.rec" }
	rep, err := Prune(dir, Retention{MaxTotal: 1, MaxAge: time.Minute}, open, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := removedNames(rep); !slices.Equal(got, []string{"crashed.rec", "closed.rec"}) {
		t.Fatalf("removed %v, want crashed.rec and closed.rec", got)
	}
	if got := left(t, dir); !slices.Equal(got, []string{"fresh.rec", "open.rec"}) {
		t.Fatalf("left %v", got)
	}
	if rep.Total <= 1 {
		t.Fatalf("total %d: the records being written still count", rep.Total)
	}
}

// Only record files count: other files and folders are neither removed
// nor counted.
func TestPruneIgnoresOthers(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-72 * time.Hour)
	for _, name := range []string{"notes.txt", "x.rec.bak", "x.rec.01", "x.rec.0", "rec"} {
		writeFile(t, filepath.Join(dir, name), []byte(strings.Repeat("y", 5000)))
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.rec"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "sub.rec"), old, old); err != nil {
		t.Fatal(err)
	}
	size := folderRecordAt(t, dir, "r.rec", 100, true, now)

	rep, err := Prune(dir, Retention{MaxTotal: size, MaxAge: time.Hour}, nil, now)
	if err != nil || len(rep.Removed) != 0 || rep.Total != size {
		t.Fatalf("prune %+v, %v; want nothing removed, %d bytes", rep, err, size)
	}
	if got := left(t, dir); len(got) != 7 {
		t.Fatalf("left %v", got)
	}
}

// Only the last line of a segment's tail decides whether it is closed.
func TestLastIsEnd(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeRecord(t, dir, Options{}, session())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !lastIsEnd(b, true) {
		t.Fatal("a closed record read as open")
	}
	if lastIsEnd(b[:len(b)-1], true) {
		t.Fatal("a partial last line read as the end")
	}
	cut := b[:len(b)-1]
	cut = cut[:strings.LastIndexByte(string(cut), '\n')+1]
	if lastIsEnd(cut, true) {
		t.Fatal("a record without its end line read as closed")
	}
	// A tail that starts mid-file: the end line counts only after a
	// newline, which shows it whole.
	nl := strings.LastIndexByte(string(b[:len(b)-1]), '\n')
	if !lastIsEnd(b[nl-3:], false) {
		t.Fatal("a tail with the whole end line read as open")
	}
	if lastIsEnd(b[nl+1:], false) {
		t.Fatal("a tail that may have cut the end line read as closed")
	}
	if closed, err := endsClosed(path); err != nil || !closed {
		t.Fatalf("endsClosed: %v, %v", closed, err)
	}
}
