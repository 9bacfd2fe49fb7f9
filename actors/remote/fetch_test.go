package remote

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// writeRecord writes a closed record (keyed with key, if set) to memory.
func writeRecord(t *testing.T, key []byte) ([]byte, messages.Recording) {
	t.Helper()
	var buf bytes.Buffer
	w := record.NewWriterTo(&buf, record.Options{Key: key})
	if err := w.Append(record.Event{Seq: 1, Kind: record.KindStart, Start: &record.Start{Session: "pty-1", Keyed: key != nil}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(record.Event{Seq: 2, Kind: record.KindMark, Data: "m"}); err != nil {
		t.Fatal(err)
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), messages.Recording{Records: sum.Records, SHA256: sum.SHA256}
}

// The fetched copy is held to the close's count and hash: verified whole
// for a plain chain, by its end record for a keyed one (no key here).
func TestFetchCheck(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("0123456789abcdef0123")} {
		data, want := writeRecord(t, key)
		check := func(data []byte, want messages.Recording) error {
			v := newFetchCheck()
			for len(data) > 0 { // in pieces, as fetched
				n := min(7, len(data))
				if _, err := v.Write(data[:n]); err != nil {
					t.Fatal(err)
				}
				data = data[n:]
			}
			return v.check(want)
		}
		if err := check(data, want); err != nil {
			t.Fatalf("keyed %v: %v", key != nil, err)
		}
		other := want
		other.SHA256 = "00" + want.SHA256[2:]
		if err := check(data, other); !errors.Is(err, ErrRecordingMismatch) {
			t.Fatalf("keyed %v, another hash: %v", key != nil, err)
		}
		if err := check(data[:len(data)-3], want); !errors.Is(err, ErrRecordingMismatch) {
			t.Fatalf("keyed %v, cut: %v", key != nil, err)
		}
	}
}
