package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// List reads every record of a folder, newest start first, with what its
// start says and its state: verified, incomplete (cut tail), corrupt (a
// flipped byte), keyed (no key given). A missing folder is ErrNoFolder.
func TestList(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, opts Options, shift time.Duration, mutate func([]byte) []byte) string {
		evs := session()
		evs[0].Start.Name, evs[0].Start.Owner = name, "agent #1"
		for i := range evs {
			evs[i].Wall = evs[i].Wall.Add(shift)
		}
		src, _ := writeRecord(t, t.TempDir(), opts, evs)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			b = mutate(b)
		}
		path := filepath.Join(dir, name+".rec")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ok := put("ok", Options{}, 0, nil)
	cut := put("cut", Options{}, time.Hour, func(b []byte) []byte { return b[:len(b)-20] })
	flipped := put("flipped", Options{}, 2*time.Hour, func(b []byte) []byte {
		b[len(b)/2] ^= 1
		return b
	})
	keyed := put("keyed", Options{Key: []byte("a key of more than sixteen bytes")}, 3*time.Hour, nil)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a record"), 0o600); err != nil {
		t.Fatal(err)
	}

	ls, err := List(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		path  string
		state State
	}{{keyed, StateKeyed}, {flipped, StateCorrupt}, {cut, StateIncomplete}, {ok, StateVerified}}
	if len(ls) != len(want) {
		t.Fatalf("listed %+v", ls)
	}
	for i, w := range want {
		l := ls[i]
		fi, _ := os.Stat(w.path)
		if l.Path != w.path || l.State != w.state || l.Session != "s1" || l.Owner != "agent #1" || l.Name != filepath.Base(w.path[:len(w.path)-4]) || l.Bytes != fi.Size() {
			t.Errorf("%d: %+v, want %s %s", i, l, w.path, w.state)
		}
		if (l.Err == nil) != (w.state == StateVerified) {
			t.Errorf("%s: err %v", w.path, l.Err)
		}
	}
	if d := ls[3].Duration; d != 1400*time.Millisecond || !ls[3].Start.Equal(epoch) {
		t.Errorf("verified record: start %v, duration %v; want %v, 1.4s", ls[3].Start, d, epoch)
	}

	_, err = List(filepath.Join(dir, "nope"), nil)
	if !errors.Is(err, ErrNoFolder) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing folder: %v", err)
	}
	if _, err := List(ok, nil); !errors.Is(err, ErrNoFolder) {
		t.Fatalf("a file for a folder: %v", err)
	}
}

// A record whose oldest segments were cut is listed with the session its
// start named, from the checkpoint it now begins at, and its start time.
func TestListCut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.rec")
	w, err := NewWriter(path, Options{MaxBytes: 4 << 10, SegmentBytes: 1 << 10, Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	evs := []Event{{Kind: KindStart, Rows: 24, Cols: 80, Start: &Start{Session: "s9", Name: "build", Owner: "agent #2"}}}
	for range 200 {
		evs = append(evs, Event{Kind: KindOutput, Data: "a line of output that fills the segments\r\n"})
	}
	for i := range evs {
		evs[i].Seq, evs[i].Mono = uint64(i+1), time.Duration(i)*time.Second
		evs[i].Wall = epoch.Add(evs[i].Mono)
		if err := w.Append(evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the first segment is still there (%v): nothing was cut", err)
	}
	ls, err := List(dir, nil)
	if err != nil || len(ls) != 1 {
		t.Fatalf("List: %+v, %v", ls, err)
	}
	l := ls[0]
	if l.Path != path || !l.Cut || l.State != StateVerified || l.Session != "s9" || l.Name != "build" || l.Owner != "agent #2" ||
		!l.Start.Equal(epoch) || l.Duration != 200*time.Second {
		t.Fatalf("cut record listed as %+v", l)
	}
}
