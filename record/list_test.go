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
