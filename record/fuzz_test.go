package record

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzVerify feeds arbitrary bytes to Verify, with and without a key:
// it never panics, and every failure is a typed one (corrupt, incomplete,
// key required); the exports and the transcript read the same bytes
// without panicking and fail exactly as Verify does; a record that
// verifies and is cut anywhere before its end is incomplete, never
// corrupt, and verifies up to the last whole line.
func FuzzVerify(f *testing.F) {
	key := []byte("fuzz key of sixteen+ bytes")
	for _, k := range [][]byte{nil, key} {
		var b bytes.Buffer
		w := NewWriterTo(&b, Options{Key: k, Clock: fixedClock})
		for _, ev := range session() {
			if err := w.Append(ev); err != nil {
				f.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes(), k != nil, uint16(100))
		f.Add(b.Bytes()[:b.Len()/2], k != nil, uint16(7))
	}
	f.Add([]byte(`{"h":"`), false, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, keyed bool, cutAt uint16) {
		var k []byte
		if keyed {
			k = key
		}
		rep, err := Verify(bytes.NewReader(data), k)
		var ce *CorruptError
		var ie *IncompleteError
		switch {
		case err == nil:
			if !rep.Closed {
				t.Fatalf("verified but not closed: %+v", rep)
			}
		case errors.As(err, &ce), errors.As(err, &ie), errors.Is(err, ErrKeyRequired):
		default:
			t.Fatalf("untyped error %T: %v", err, err)
		}
		for _, read := range []func(io.Writer, *Reader) error{ExportV2, ExportV3} {
			rerr := read(io.Discard, NewReader(bytes.NewReader(data), k))
			if (rerr == nil) != (err == nil) || (rerr != nil && rerr.Error() != err.Error()) {
				t.Fatalf("verify: %v, a reader: %v", err, rerr)
			}
		}
		if err != nil || len(data) == 0 {
			return
		}
		cut := int(cutAt) % len(data)
		want := uint64(bytes.Count(data[:cut], []byte("\n")))
		if want > 0 {
			want += rep.First - 1 // numbered in the whole chain
		}
		_, err = Verify(bytes.NewReader(data[:cut]), k)
		if !errors.As(err, &ie) || ie.Verified != want {
			t.Fatalf("cut at %d of %d: %v, want incomplete at %d", cut, len(data), err, want)
		}
	})
}
