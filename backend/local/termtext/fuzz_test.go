package termtext

import (
	"bytes"
	"testing"
)

// FuzzParser checks, for arbitrary input and an arbitrary chunking derived
// from cuts, that the parser never panics, that every Text call honours the
// Sink contract (valid UTF-8; no ESC, BEL or CR), that the result does not
// depend on the chunking (whole input, 1-byte chunks, the fuzzed chunks), and
// that it equals the reference model.
func FuzzParser(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.in), []byte{3, 1, 4, 1, 5})
	}
	f.Add(sampleOutput(600), []byte{7, 200, 13})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		if len(data) > 4096 {
			return
		}
		maxSeq := 0
		if len(cuts) > 0 && cuts[0]&1 == 1 {
			maxSeq = int(cuts[0]) // odd values exercise small bounds
		}
		want := run(t, maxSeq, data)
		if got := runBytewise(t, maxSeq, data); !equal(got, want) {
			t.Fatalf("1-byte chunks differ:\n got %v\nwant %v", got, want)
		}
		var sizes []int
		for _, c := range cuts {
			sizes = append(sizes, int(c)%32)
		}
		if got := run(t, maxSeq, data, sizes...); !equal(got, want) {
			t.Fatalf("chunks %v differ:\n got %v\nwant %v", sizes, got, want)
		}
		if ref := reference(data, maxSeq); !equal(ref, want) {
			t.Fatalf("reference model differs:\n got %v\nwant %v", want, ref)
		}
		for _, e := range want {
			if !e.osc {
				checkText(t, []byte(e.data))
			} else if bytes.ContainsAny([]byte(e.data), "\x07\x1b\x18\x1a") {
				t.Fatalf("OSC payload %q contains a terminator", e.data)
			}
		}
	})
}
