package vt

import (
	"reflect"
	"testing"
)

// FuzzEmulator feeds arbitrary output to a small terminal and checks that
// the emulator never panics; that screen text and transcript are valid
// UTF-8 without ESC, BEL, CR or other controls; that the screen,
// transcript, modes and replies are the same for the whole input, 1-byte
// chunks and the fuzzed chunks, with an optional resize at a fixed point
// of the stream; and that memory stays within a bound that depends on the
// size and the history limits, never on the input.
func FuzzEmulator(f *testing.F) {
	for _, tc := range transcriptCases {
		f.Add([]byte(tc.in), []byte{byte(tc.rows), byte(tc.cols), 3, 1, 4, 1, 5})
	}
	for _, tc := range oracleCases {
		f.Add([]byte(tc.in), []byte{byte(tc.rows), byte(tc.cols), 2, 7, 1, 8})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		if len(data) > 4096 {
			return
		}
		rows, cols, resize := 4, 10, -1
		var to Size
		if len(cuts) >= 2 {
			rows, cols = 1+int(cuts[0])%8, 2+int(cuts[1])%24
			cuts = cuts[2:]
		}
		if len(cuts) >= 3 && cuts[0]&1 == 1 && len(data) > 0 {
			resize = int(cuts[0]) * len(data) / 256
			to = Size{1 + int(cuts[1])%8, 2 + int(cuts[2])%24}
			cuts = cuts[3:]
		}
		opts := Options{HistoryLines: 20, HistoryBytes: 300}
		feed := func(sizes []int) result {
			var replies []byte
			o := opts
			o.Reply = func(p []byte) { replies = append(replies, p...) }
			e, err := New(rows, cols, o)
			if err != nil {
				t.Fatal(err)
			}
			feedChunks := func(in []byte) {
				for i := 0; len(in) > 0; i++ {
					n := len(in)
					if sizes != nil {
						n = min(n, 1+sizes[i%len(sizes)])
					}
					e.Feed(in[:n])
					in = in[n:]
					checkFootprint(t, e, opts)
				}
			}
			if resize >= 0 {
				feedChunks(data[:resize])
				if err := e.Resize(to.Rows, to.Cols); err != nil {
					t.Fatal(err)
				}
				feedChunks(data[resize:])
			} else {
				feedChunks(data)
			}
			return result{e.Screen(), e.Transcript(0), e.Modes(), string(replies)}
		}
		want := feed(nil)
		checkState(t, want)
		if got := feed([]int{0}); !reflect.DeepEqual(got, want) {
			t.Fatalf("1-byte chunks differ:\n got %+v\nwant %+v", got, want)
		}
		var sizes []int
		for _, c := range cuts {
			sizes = append(sizes, int(c)%64)
		}
		if len(sizes) > 0 {
			if got := feed(sizes); !reflect.DeepEqual(got, want) {
				t.Fatalf("chunks %v differ:\n got %+v\nwant %+v", sizes, got, want)
			}
		}
	})
}

// footprint returns the bytes e holds in arrays that could grow with input.
func footprint(e *Emulator) int {
	n := cap(e.hist.buf) + 8*cap(e.hist.offs) + cap(e.hist.partial) +
		cap(e.tabs) + cap(e.rbuf) + cap(e.tbuf)
	for _, s := range []*screen{&e.main, e.alt} {
		if s == nil {
			continue
		}
		for i := range s.lines {
			l := &s.lines[i]
			n += 4 * cap(l.cells)
			for _, m := range l.marks {
				n += 8 + len(m)
			}
		}
	}
	return n
}

// checkFootprint holds e to a bound set by its size and history limits:
// two screens of cells with their marks, the history arrays (text and
// offsets, up to twice the limits before compaction), a partial line and
// the row scratch, each at most the byte limit plus a row.
func checkFootprint(t *testing.T, e *Emulator, o Options) {
	t.Helper()
	rows, cols := e.rows, e.cols
	row := cols * (utf8Max + maxMarks)
	bound := 2*rows*cols*(4+8+maxMarks) + // screens
		2*(o.HistoryBytes+row) + 8*4*(o.HistoryLines+1) + // history and offsets
		2*(o.HistoryBytes+row) + // partial
		2*(o.HistoryBytes+rows*row) + // text scratch
		cols + 64 // tabs, reply scratch
	if n := footprint(e); n > bound {
		t.Fatalf("emulator holds %d bytes, bound %d (%dx%d)", n, bound, rows, cols)
	}
}

const utf8Max = 4

var raceEnabled bool
