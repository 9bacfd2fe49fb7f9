package vt

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// result is everything a chunking must not change.
type result struct {
	Screen     Screen
	Transcript Transcript
	Modes      Modes
	Replies    string
}

// run feeds input to a fresh rows × cols emulator in chunks of the given
// sizes (the rest in one last chunk) and returns what it shows.
func run(t testing.TB, rows, cols int, opts Options, input []byte, sizes ...int) result {
	t.Helper()
	var replies bytes.Buffer
	opts.Reply = func(p []byte) { replies.Write(p) }
	e, err := New(rows, cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sizes {
		n = min(n, len(input))
		e.Feed(input[:n])
		input = input[n:]
	}
	e.Feed(input)
	return result{e.Screen(), e.Transcript(0), e.Modes(), replies.String()}
}

// chunkings returns the ways TestTranscript and others cut an input:
// whole, 1-byte chunks, and random splits.
func chunkings(n int, seed uint64) map[string][]int {
	ones := make([]int, n)
	for i := range ones {
		ones[i] = 1
	}
	out := map[string][]int{"whole": nil, "bytes": ones}
	r := rand.New(rand.NewPCG(seed, 15))
	for k := range 4 {
		var sizes []int
		for left := n; left > 0; {
			s := 1 + r.IntN(9)
			sizes = append(sizes, s)
			left -= s
		}
		out["random"+string(rune('1'+k))] = sizes
	}
	return out
}

// lines returns the whole transcript: the final lines, then the tail.
func (s result) lines() []string {
	return append(append([]string{}, s.Transcript.Final...), s.Transcript.Tail...)
}

// checkText fails when text the emulator hands out is not plain: valid
// UTF-8 without ESC, BEL, CR or other C0 controls.
func checkText(t testing.TB, where string, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s: %q is not valid UTF-8", where, s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		t.Errorf("%s: %q holds control %#x", where, s, s[i])
	}
}

func checkState(t testing.TB, s result) {
	t.Helper()
	for _, r := range s.Screen.Rows {
		checkText(t, "screen", r)
	}
	for _, l := range s.lines() {
		checkText(t, "transcript", l)
	}
}

// checkChunking runs input whole, bytewise and randomly split and fails
// when any result differs from the whole one; it returns that one.
func checkChunking(t testing.TB, rows, cols int, opts Options, input []byte) result {
	t.Helper()
	want := run(t, rows, cols, opts, input)
	checkState(t, want)
	for name, sizes := range chunkings(len(input), uint64(len(input))) {
		if got := run(t, rows, cols, opts, input, sizes...); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s chunks differ:\n got %+v\nwant %+v", name, got, want)
		}
	}
	return want
}
