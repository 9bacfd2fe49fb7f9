package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestVerifyIntact(t *testing.T) {
	evs := session()
	path, sum := writeRecord(t, t.TempDir(), Options{}, evs)
	rep, err := VerifyFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(len(evs) + 1)
	if !rep.Closed || rep.Records != n || rep.First != 1 || rep.Keyed || rep.FromCheckpoint {
		t.Fatalf("report %+v, want closed with %d records from 1", rep, n)
	}
	if sum.Records != n || sum.SHA256 != rep.Last || sum.Path != path {
		t.Fatalf("summary %+v, report %+v", sum, rep)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestReadBack: the events read are the events written, a character
// split across reads included (stored as raw bytes, given back in Data).
func TestReadBack(t *testing.T) {
	evs := session()
	path, _ := writeRecord(t, t.TempDir(), Options{}, evs)
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, want := range evs {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		if got.Kind != want.Kind || got.Seq != want.Seq || got.Data != want.Data || got.Raw != nil || !got.Wall.Equal(want.Wall) {
			t.Fatalf("event %d: got %+v, want %+v", i+1, got, want)
		}
	}
	end, err := r.Next()
	if err != nil || end.Kind != KindEnd || end.Count != uint64(len(evs)) {
		t.Fatalf("end: %+v, %v", end, err)
	}
	if _, err := r.Next(); err == nil || err.Error() != "EOF" {
		t.Fatalf("after end: %v, want EOF", err)
	}
}

func corruptAt(t *testing.T, b []byte, key []byte, record uint64) {
	t.Helper()
	_, err := Verify(bytes.NewReader(b), key)
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err %v, want *CorruptError", err)
	}
	if ce.Record != record {
		t.Fatalf("corrupt at %d (%s), want %d", ce.Record, ce.Reason, record)
	}
}

func incompleteAt(t *testing.T, b []byte, verified uint64) {
	t.Helper()
	rep, err := Verify(bytes.NewReader(b), nil)
	var ie *IncompleteError
	if !errors.As(err, &ie) || !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v, want *IncompleteError", err)
	}
	if ie.Verified != verified || rep.Records != verified || rep.Closed {
		t.Fatalf("incomplete at %d, report %+v; want %d", ie.Verified, rep, verified)
	}
}

func TestVerifyFlippedByte(t *testing.T) {
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	ls := lines(t, path)
	// Every byte of record 5, the frame and the hash included.
	for i := range ls[4] {
		if ls[4][i] == '\n' {
			continue
		}
		b := bytes.Clone(bytes.Join(ls, nil))
		off := len(bytes.Join(ls[:4], nil)) + i
		b[off] ^= 0x01
		corruptAt(t, b, nil, 5)
	}
}

func TestVerifyRemovedLine(t *testing.T) {
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	ls := lines(t, path)
	b := bytes.Join(append(append([][]byte{}, ls[:6]...), ls[7:]...), nil)
	corruptAt(t, b, nil, 7)
	// The end record removed: incomplete, since a crash looks the same.
	incompleteAt(t, bytes.Join(ls[:len(ls)-2], nil), uint64(len(ls)-2))
}

func TestVerifySwappedLines(t *testing.T) {
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	ls := lines(t, path)
	ls[3], ls[4] = ls[4], ls[3]
	corruptAt(t, bytes.Join(ls, nil), nil, 4)
}

func TestVerifyTruncated(t *testing.T) {
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	ls := lines(t, path)
	head := bytes.Join(ls[:9], nil)
	incompleteAt(t, head, 9)                                     // at a line boundary
	incompleteAt(t, append(bytes.Clone(head), ls[9][:20]...), 9) // mid-line
	incompleteAt(t, append(bytes.Clone(head), ls[9][:len(ls[9])-1]...), 9)
	incompleteAt(t, nil, 0)
	incompleteAt(t, ls[0][:10], 0)
}

func TestVerifyAfterEnd(t *testing.T) {
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	ls := lines(t, path)
	b := append(bytes.Join(ls, nil), ls[1]...)
	corruptAt(t, b, nil, uint64(len(ls)))
}

func TestVerifyKeyed(t *testing.T) {
	key := []byte("0123456789abcdef-key")
	path, sum := writeRecord(t, t.TempDir(), Options{Key: key}, session())
	rep, err := VerifyFile(path, key)
	if err != nil || !rep.Keyed || rep.Last != sum.SHA256 {
		t.Fatalf("with the key: %+v, %v", rep, err)
	}
	if _, err := VerifyFile(path, nil); !errors.Is(err, ErrKeyRequired) {
		t.Fatalf("without a key: %v, want ErrKeyRequired", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	corruptAt(t, b, []byte("another key of 16+ bytes"), 1)

	// A plain chain read with a key: a keyed chain rewritten as a plain
	// one must not pass.
	plain, _ := writeRecord(t, t.TempDir(), Options{}, session())
	b, err = os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	corruptAt(t, b, key, 1)
}

// TestVerifySeq: a chain whose hashes are right but whose events skip a
// sequence number (a producer's bug or a chain forged whole) is corrupt.
func TestVerifySeq(t *testing.T) {
	evs := session()
	evs[5].Seq = 99
	path, _ := writeRecord(t, t.TempDir(), Options{}, evs)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	corruptAt(t, b, nil, 6)
}

func TestOpenDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "records")
	if err := OpenDir(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	err = OpenDir(open)
	var me *ModeError
	if !errors.As(err, &me) || !errors.Is(err, ErrPermissive) || me.Path != open {
		t.Fatalf("0755: %v, want *ModeError", err)
	}
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	writeFile(t, path, []byte("0123456789abcdef\n"))
	key, err := ReadKeyFile(path)
	if err != nil || string(key) != "0123456789abcdef" {
		t.Fatalf("%q, %v", key, err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(path); !errors.Is(err, ErrPermissive) {
		t.Fatalf("0640: %v, want ErrPermissive", err)
	}
	short := filepath.Join(dir, "short")
	writeFile(t, short, []byte("abc"))
	if _, err := ReadKeyFile(short); err == nil {
		t.Fatal("a 3-byte key was accepted")
	}
}
