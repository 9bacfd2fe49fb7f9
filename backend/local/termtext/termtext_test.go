package termtext

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// event is one Sink call; adjacent Text calls are merged, because how text is
// divided between calls is not part of the contract.
type event struct {
	osc  bool
	data string
}

func (e event) String() string {
	if e.osc {
		return fmt.Sprintf("OSC(%q)", e.data)
	}
	return fmt.Sprintf("Text(%q)", e.data)
}

// recorder is a Sink that records events and checks every Text call against
// the Sink contract.
type recorder struct {
	t      testing.TB
	events []event
	text   []byte // text since the last OSC, not yet in events
}

func (r *recorder) Text(b []byte) {
	if len(b) == 0 {
		r.t.Errorf("Text called with an empty slice")
	}
	checkText(r.t, b)
	r.text = append(r.text, b...)
}

func (r *recorder) OSC(payload []byte) {
	if len(payload) > MaxOSCPayload {
		r.t.Errorf("OSC payload of %d bytes exceeds MaxOSCPayload", len(payload))
	}
	r.flush()
	r.events = append(r.events, event{osc: true, data: string(payload)})
}

func (r *recorder) flush() {
	if len(r.text) > 0 {
		r.events = append(r.events, event{data: string(r.text)})
		r.text = r.text[:0]
	}
}

// result returns the events recorded so far; text is only split into
// separate events by an OSC.
func (r *recorder) result() []event {
	out := slices.Clone(r.events)
	if len(r.text) > 0 {
		out = append(out, event{data: string(r.text)})
	}
	return out
}

func checkText(t testing.TB, b []byte) {
	t.Helper()
	if !utf8.Valid(b) {
		t.Errorf("Text(%q) is not valid UTF-8", b)
	}
	if i := bytes.IndexAny(b, "\x1b\x07\r\x00\x18\x1a\x7f"); i >= 0 {
		t.Errorf("Text(%q) contains forbidden byte %#x", b, b[i])
	}
}

// run feeds input cut into the given chunk sizes (the rest goes in one last
// chunk), then flushes.
func run(t testing.TB, maxSeq int, input []byte, sizes ...int) []event {
	t.Helper()
	p := New(maxSeq)
	r := &recorder{t: t}
	for _, n := range sizes {
		n = min(n, len(input))
		p.Feed(input[:n], r)
		input = input[n:]
	}
	p.Feed(input, r)
	p.Flush(r)
	return r.result()
}

func runBytewise(t testing.TB, maxSeq int, input []byte) []event {
	t.Helper()
	sizes := make([]int, len(input))
	for i := range sizes {
		sizes[i] = 1
	}
	return run(t, maxSeq, input, sizes...)
}

func equal(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func txt(s string) event { return event{data: s} }
func osc(s string) event { return event{osc: true, data: s} }

var cases = []struct {
	name string
	in   string
	want []event
}{
	{"empty", "", nil},
	{"plain", "hello, world", []event{txt("hello, world")}},
	{"tab and backspace pass", "a\tb\bc", []event{txt("a\tb\bc")}},
	{"other C0 pass", "a\x01\x0b\x0c\x0e\x1f", []event{txt("a\x01\x0b\x0c\x0e\x1f")}},
	{"NUL BEL DEL dropped", "a\x00b\x07c\x7fd", []event{txt("abcd")}},
	{"CAN SUB dropped in ground", "a\x18b\x1ac", []event{txt("abc")}},
	{"CRLF", "a\r\nb\r\n", []event{txt("a\nb\n")}},
	{"lone CR", "50%\r60%\rdone", []event{txt("50%\n60%\ndone")}},
	{"CR at end", "a\r", []event{txt("a\n")}},
	{"CR CR LF", "a\r\r\nb", []event{txt("a\n\nb")}},
	{"LF CR", "a\n\rb", []event{txt("a\n\nb")}},
	{"CR across CSI then LF", "a\r\x1b[K\nb", []event{txt("a\nb")}},
	{"CR across BEL and NUL then LF", "a\r\x07\x00\nb", []event{txt("a\nb")}},
	{"CR before reported OSC", "a\r\x1b]0;t\x07\nb", []event{txt("a\n"), osc("0;t"), txt("\nb")}},
	{"CR across unreported OSC", "a\r\x1b]" + strings.Repeat("x", MaxOSCPayload+1) + "\x07\nb", []event{txt("a\nb")}},
	{"CSI stripped", "\x1b[1;31mred\x1b[0m", []event{txt("red")}},
	{"CSI private", "a\x1b[?25lb\x1b[?25hc", []event{txt("abc")}},
	{"bracketed paste on", "\x1b[?2004hdsh> ", []event{txt("dsh> ")}},
	{"bracketed paste off", "ls\r\n\x1b[?2004l\rfile\r\n", []event{txt("ls\n\nfile\n")}},
	{"CSI with intermediate", "a\x1b[1 qb", []event{txt("ab")}},
	{"CSI abandoned by LF", "a\x1b[12\nb", []event{txt("a\nb")}},
	{"CSI abandoned by ESC", "a\x1b[12\x1b[mb", []event{txt("ab")}},
	{"CSI cancelled by CAN", "a\x1b[12\x18b", []event{txt("ab")}},
	{"CSI cancelled by SUB", "a\x1b[12\x1ab", []event{txt("ab")}},
	{"CSI ignores DEL", "a\x1b[1\x7f2mb", []event{txt("ab")}},
	{"CSI abandoned by UTF-8", "a\x1b[1é", []event{txt("aé")}},
	{"OSC BEL", "a\x1b]0;title\x07b", []event{txt("a"), osc("0;title"), txt("b")}},
	{"OSC ST", "a\x1b]0;title\x1b\\b", []event{txt("a"), osc("0;title"), txt("b")}},
	{"OSC empty", "\x1b]\x07", []event{osc("")}},
	{"prompt marker", "out\r\n\x1b]133;D;0;abc\x07dsh> ", []event{txt("out\n"), osc("133;D;0;abc"), txt("dsh> ")}},
	{"OSC UTF-8 payload", "\x1b]2;héllo\x07", []event{osc("2;héllo")}},
	{"OSC cancelled by CAN", "a\x1b]0;t\x18b", []event{txt("ab")}},
	{"OSC abandoned by ESC", "a\x1b]0;t\x1b[31mb", []event{txt("ab")}},
	{"OSC ESC ESC", "a\x1b]0;t\x1b\x1b\\b", []event{txt("ab")}},
	{"OSC at max payload", "\x1b]" + strings.Repeat("p", MaxOSCPayload) + "\x07x", []event{osc(strings.Repeat("p", MaxOSCPayload)), txt("x")}},
	{"OSC over max payload", "\x1b]" + strings.Repeat("p", MaxOSCPayload+1) + "\x07x", []event{txt("x")}},
	{"unterminated OSC dropped at flush", "a\x1b]0;never ends", []event{txt("a")}},
	{"DCS stripped", "a\x1bPq#0;2;0;0;0#0~~@@\x1b\\b", []event{txt("ab")}},
	{"APC stripped", "a\x1b_Gf=100;AAAA\x1b\\b", []event{txt("ab")}},
	{"PM stripped", "a\x1b^private\x1b\\b", []event{txt("ab")}},
	{"SOS stripped", "a\x1bXstring\x1b\\b", []event{txt("ab")}},
	{"DCS BEL does not terminate", "a\x1bPx\x07y\x1b\\b", []event{txt("ab")}},
	{"DCS cancelled by CAN", "a\x1bPxy\x18b", []event{txt("ab")}},
	{"DCS abandoned by ESC", "a\x1bPxy\x1b[mb", []event{txt("ab")}},
	{"charset designation", "a\x1b(Bb\x1b)0c", []event{txt("abc")}},
	{"nF with two intermediates", "a\x1b$(Cb", []event{txt("ab")}},
	{"DECSC DECRC keypad", "a\x1b7b\x1b8c\x1b=d\x1b>e", []event{txt("abcde")}},
	{"ESC ESC", "a\x1b\x1b[31mb", []event{txt("ab")}},
	{"ESC then LF", "a\x1b\nb", []event{txt("a\nb")}},
	{"ESC then CR", "a\x1b\r\nb", []event{txt("a\nb")}},
	{"ESC then UTF-8", "a\x1bé", []event{txt("aé")}},
	{"ESC then CAN", "a\x1b\x18b", []event{txt("ab")}},
	{"ESC at end dropped", "a\x1b", []event{txt("a")}},
	{"UTF-8", "héllo wörld ✓ 🎉", []event{txt("héllo wörld ✓ 🎉")}},
	{"C1 as UTF-8 passes", "a\u0085b\u009bc", []event{txt("a\u0085b\u009bc")}},
	{"raw C1 byte", "a\x9bb", []event{txt("a\uFFFDb")}},
	{"lone continuation", "a\x80b", []event{txt("a\uFFFDb")}},
	{"truncated sequence mid-stream", "a\xe2\x82b", []event{txt("a\uFFFD\uFFFDb")}},
	{"truncated sequence at end", "a\xe2\x82", []event{txt("a\uFFFD\uFFFD")}},
	{"overlong", "\xc0\xaf", []event{txt("\uFFFD\uFFFD")}},
	{"surrogate", "\xed\xa0\x80", []event{txt("\uFFFD\uFFFD\uFFFD")}},
	{"beyond U+10FFFF", "\xf4\x90\x80\x80", []event{txt("\uFFFD\uFFFD\uFFFD\uFFFD")}},
	{"0xFF", "\xff\xfe", []event{txt("\uFFFD\uFFFD")}},
	{"CR then malformed", "a\r\xffb", []event{txt("a\n\uFFFDb")}},
	{"truncated UTF-8 before ESC", "a\xe2\x1b[mb", []event{txt("a\uFFFDb")}},
}

func TestParser(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := run(t, 0, in)
			if !equal(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
			if ref := reference(in, 0); !equal(ref, tc.want) {
				t.Fatalf("reference model disagrees: %v", ref)
			}
			if got := runBytewise(t, 0, in); !equal(got, tc.want) {
				t.Fatalf("1-byte chunks: got %v\nwant %v", got, tc.want)
			}
			for cut := 0; cut <= len(in); cut++ {
				if got := run(t, 0, in, cut); !equal(got, tc.want) {
					t.Fatalf("split at %d: got %v\nwant %v", cut, got, tc.want)
				}
			}
		})
	}
}

// TestSplits pins the splits the brief singles out, chunk by chunk, including
// what is emitted before the rest of the stream arrives.
func TestSplits(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []event
	}{
		{"split CSI", []string{"a\x1b", "[3", "1mb"}, []event{txt("ab")}},
		{"split OSC BEL", []string{"\x1b]133;D", ";0\x07", "dsh> "}, []event{osc("133;D;0"), txt("dsh> ")}},
		{"split OSC between ESC and backslash", []string{"\x1b]0;t\x1b", "\\b"}, []event{osc("0;t"), txt("b")}},
		{"split OSC ST", []string{"\x1b]0", ";t\x1b\\", "b"}, []event{osc("0;t"), txt("b")}},
		{"split CRLF", []string{"a\r", "\nb"}, []event{txt("a\nb")}},
		{"CR alone at chunk end", []string{"a\r", "b"}, []event{txt("a\nb")}},
		{"UTF-8 split 2+1", []string{"\xe2\x82", "\xac"}, []event{txt("€")}},
		{"UTF-8 split 1+3", []string{"\xf0", "\x9f\x8e\x89"}, []event{txt("🎉")}},
		{"UTF-8 split 1+1+1+1", []string{"\xf0", "\x9f", "\x8e", "\x89!"}, []event{txt("🎉!")}},
		{"UTF-8 split then invalid", []string{"\xe2\x82", "x"}, []event{txt("\uFFFD\uFFFDx")}},
		{"UTF-8 split then ESC", []string{"\xe2", "\x1b[mx"}, []event{txt("\uFFFDx")}},
		{"split DCS", []string{"a\x1bP", "payload\x1b", "\\b"}, []event{txt("ab")}},
		{"split APC", []string{"a\x1b_", "payload", "\x1b\\b"}, []event{txt("ab")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(0)
			r := &recorder{t: t}
			for _, c := range tc.chunks {
				p.Feed([]byte(c), r)
			}
			p.Flush(r)
			if !equal(r.result(), tc.want) {
				t.Fatalf("got %v\nwant %v", r.result(), tc.want)
			}
		})
	}
}

func TestPendingStateIsHeld(t *testing.T) {
	p := New(0)
	r := &recorder{t: t}
	p.Feed([]byte("a\r"), r)
	if !equal(r.result(), []event{txt("a")}) {
		t.Fatalf("a trailing CR must wait for the next chunk: %v", r.result())
	}
	p.Feed([]byte("\xe2\x82"), r)
	if !equal(r.result(), []event{txt("a\n")}) {
		t.Fatalf("an incomplete character must be held: %v", r.result())
	}
	p.Feed([]byte("\xac"), r)
	if !equal(r.result(), []event{txt("a\n€")}) {
		t.Fatalf("got %v", r.result())
	}
	p.Feed([]byte("\x1b]0;x"), r)
	p.Flush(r)
	if !equal(r.result(), []event{txt("a\n€")}) {
		t.Fatalf("an open sequence must be dropped at flush: %v", r.result())
	}
	// Flush resets: the parser starts over in the ground state.
	p.Feed([]byte("b"), r)
	if !equal(r.result(), []event{txt("a\n€b")}) {
		t.Fatalf("after flush: %v", r.result())
	}
}

func TestMaxSeq(t *testing.T) {
	payload := "133;D;0;" + strings.Repeat("n", 40)
	seq := "\x1b]" + payload + "\x07" // 2 + len(payload) + 1 bytes
	in := []byte("a" + seq + "b")
	if got := run(t, len(seq), in); !equal(got, []event{txt("a"), osc(payload), txt("b")}) {
		t.Fatalf("an OSC of exactly maxSeq bytes must be reported: %v", got)
	}
	if got := run(t, len(seq)-1, in); !equal(got, []event{txt("ab")}) {
		t.Fatalf("an OSC over maxSeq must not be reported: %v", got)
	}
	st := []byte("a\x1b]" + payload + "\x1b\\b")
	if got := run(t, len(st)-2, st); !equal(got, []event{txt("a"), osc(payload), txt("b")}) {
		t.Fatalf("ST counts two bytes: %v", got)
	}
	if got := run(t, len(st)-3, st); !equal(got, []event{txt("ab")}) {
		t.Fatalf("ST counts two bytes: %v", got)
	}
}

// TestUnterminatedSequenceIsBounded feeds a sequence far longer than maxSeq in
// many chunks: nothing of it is reported, memory does not grow, and text
// resumes after its terminator.
func TestUnterminatedSequenceIsBounded(t *testing.T) {
	const maxSeq = 1024
	junk := bytes.Repeat([]byte("0123456789;"), 1000)
	for _, open := range []string{"\x1b]0;", "\x1bP", "\x1b_", "\x1b^", "\x1bX", "\x1b["} {
		t.Run(fmt.Sprintf("%q", open), func(t *testing.T) {
			p := New(maxSeq)
			r := &recorder{t: t}
			p.Feed([]byte("before"+open), r)
			allocs := testing.AllocsPerRun(100, func() { p.Feed(junk, r) })
			if allocs != 0 {
				t.Errorf("feeding a long sequence allocated %v times per chunk", allocs)
			}
			term := "\x1b\\"
			if open == "\x1b]0;" {
				term = "\x07"
			} else if open == "\x1b[" {
				term = "m"
			}
			p.Feed([]byte(term+"after\r\n"), r)
			p.Flush(r)
			if want := []event{txt("beforeafter\n")}; !equal(r.result(), want) {
				t.Fatalf("got %v, want %v", r.result(), want)
			}
		})
	}
}

func TestSteadyPathDoesNotAllocate(t *testing.T) {
	input := sampleOutput(64 << 10)
	p := New(1 << 18)
	var s nopSink
	allocs := testing.AllocsPerRun(20, func() {
		for i := 0; i < len(input); i += 4096 {
			p.Feed(input[i:min(i+4096, len(input))], &s)
		}
	})
	if allocs != 0 {
		t.Fatalf("Feed allocated %v times per run", allocs)
	}
}

// alphabet holds the bytes that make state transitions interesting. Every
// string over it up to exhaustiveLen bytes is parsed under every chunking.
var alphabet = []byte{0x1b, '[', ']', '\\', 0x07, '\r', '\n', 'a', 'P', 0x18, 0xe2, 0x82, 0xac, 0x80, '('}

const exhaustiveLen = 4

// TestChunkingInvarianceExhaustive parses every string over alphabet of up to
// exhaustiveLen bytes under all 2^(n-1) ways of cutting it into chunks, and
// compares each result with the reference model.
func TestChunkingInvarianceExhaustive(t *testing.T) {
	n := exhaustiveLen
	if testing.Short() {
		n--
	}
	buf := make([]byte, 0, n)
	var walk func()
	count := 0
	walk = func() {
		if len(buf) > 0 {
			checkAllChunkings(t, buf)
			count++
		}
		if len(buf) == n || t.Failed() {
			return
		}
		for _, c := range alphabet {
			buf = append(buf, c)
			walk()
			buf = buf[:len(buf)-1]
		}
	}
	walk()
	t.Logf("%d inputs, every chunking", count)
}

func checkAllChunkings(t *testing.T, in []byte) {
	t.Helper()
	want := reference(in, 0)
	// Bit k of mask set: cut after byte k.
	for mask := 0; mask < 1<<(len(in)-1); mask++ {
		p := New(0)
		r := &recorder{t: t}
		start := 0
		for k := 0; k < len(in)-1; k++ {
			if mask&(1<<k) != 0 {
				p.Feed(in[start:k+1], r)
				start = k + 1
			}
		}
		p.Feed(in[start:], r)
		p.Flush(r)
		if !equal(r.result(), want) {
			t.Fatalf("input %q, cut mask %b:\n got %v\nwant %v", in, mask, r.result(), want)
		}
	}
}

// TestChunkingInvarianceRandom parses random terminal-like streams under
// random chunkings, every single split point and 1-byte chunks.
func TestChunkingInvarianceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iters := 2000
	if testing.Short() {
		iters = 200
	}
	for it := 0; it < iters; it++ {
		in := randomStream(rng, 1+rng.IntN(200))
		maxSeq := 0
		if rng.IntN(3) == 0 {
			maxSeq = 4 + rng.IntN(40)
		}
		want := reference(in, maxSeq)
		if got := run(t, maxSeq, in); !equal(got, want) {
			t.Fatalf("input %q: whole input disagrees with the reference:\n got %v\nwant %v", in, got, want)
		}
		if got := runBytewise(t, maxSeq, in); !equal(got, want) {
			t.Fatalf("input %q: 1-byte chunks:\n got %v\nwant %v", in, got, want)
		}
		if it%10 == 0 {
			for cut := 1; cut < len(in); cut++ {
				if got := run(t, maxSeq, in, cut); !equal(got, want) {
					t.Fatalf("input %q: split at %d:\n got %v\nwant %v", in, cut, got, want)
				}
			}
		}
		for k := 0; k < 5; k++ {
			var sizes []int
			for rest := len(in); rest > 0; {
				n := 1 + rng.IntN(min(rest, 1+rng.IntN(16)))
				sizes = append(sizes, n)
				rest -= n
			}
			if got := run(t, maxSeq, in, sizes...); !equal(got, want) {
				t.Fatalf("input %q: chunks %v:\n got %v\nwant %v", in, sizes, got, want)
			}
		}
	}
}

// randomStream returns bytes biased towards the pieces of real terminal
// output, with some plain noise.
func randomStream(rng *rand.Rand, n int) []byte {
	pieces := []string{
		"a", "hello", " ", "\r\n", "\r", "\n", "\t", "\x07", "\x00", "\x7f", "\x18", "\x1a",
		"\x1b", "\x1b[", "\x1b[0m", "\x1b[1;31m", "\x1b[?2004h", "\x1b[K", "\x1b[12",
		"\x1b]", "\x1b]0;title\x07", "\x1b]133;D;0\x07", "\x1b\\", "\x1bP", "\x1b_", "\x1b^", "\x1bX",
		"\x1b(B", "\x1b7", "\x1b=", "\x1b$", "é", "€", "🎉", "\u0085", "\xe2\x82", "\xf0\x9f", "\x80", "\xff",
		"\xc0\xaf", "\xed\xa0\x80", ";", "[", "]", "\\", "P",
	}
	var b []byte
	for len(b) < n {
		if rng.IntN(8) == 0 {
			b = append(b, byte(rng.IntN(256)))
			continue
		}
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b
}

// reference is an independent, deliberately naive model of the sanitizer: it
// sees the whole input at once and decides each sequence by looking ahead, so
// it has no carry state at all. Streaming output must equal it.
func reference(in []byte, maxSeq int) []event {
	var out []event
	var text []byte
	addText := func(s string) { text = append(text, s...) }
	flushText := func() {
		if len(text) > 0 {
			out = append(out, event{data: string(text)})
			text = text[:0]
		}
	}
	pendingCR := false
	resolve := func() {
		if pendingCR {
			pendingCR = false
			addText("\n")
		}
	}
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\r':
			resolve()
			pendingCR = true
			i++
		case c == '\n':
			pendingCR = false
			addText("\n")
			i++
		case c == 0x00 || c == 0x07 || c == 0x18 || c == 0x1a || c == 0x7f:
			i++
		case c == 0x1b:
			next, payload, ok := refEscape(in, i, maxSeq)
			if ok {
				resolve()
				flushText()
				out = append(out, event{osc: true, data: string(payload)})
			}
			i = next
		case c < 0x80:
			resolve()
			addText(string(c))
			i++
		default:
			resolve()
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				addText("\uFFFD")
			} else {
				addText(string(in[i : i+size]))
			}
			i += size
		}
	}
	resolve()
	flushText()
	return out
}

// refEscape parses the sequence whose ESC is at in[i] and returns the index
// after it (a byte that abandons the sequence is not part of it), plus the OSC
// payload when one is to be reported.
func refEscape(in []byte, i, maxSeq int) (next int, payload []byte, report bool) {
	isFinalCSI := func(c byte) bool { return c >= 0x40 && c <= 0x7e }
	for {
		j := i + 1
		for j < len(in) && in[j] == 0x7f {
			j++
		}
		if j == len(in) {
			return j, nil, false
		}
		switch c := in[j]; {
		case c == 0x1b:
			i = j
			continue
		case c == '[':
			k := j + 1
			for k < len(in) && (in[k] >= 0x20 && in[k] <= 0x3f || in[k] == 0x7f) {
				k++
			}
			if k < len(in) && isFinalCSI(in[k]) {
				return k + 1, nil, false
			}
			return k, nil, false
		case c == ']', c == 'P', c == 'X', c == '^', c == '_':
			k := j + 1
			for k < len(in) && in[k] != 0x1b && in[k] != 0x18 && in[k] != 0x1a && (c != ']' || in[k] != 0x07) {
				k++
			}
			if k == len(in) {
				return k, nil, false
			}
			body := in[j+1 : k]
			switch {
			case in[k] == 0x18 || in[k] == 0x1a:
				return k + 1, nil, false
			case in[k] == 0x07:
				return k + 1, body, c == ']' && fits(body, 1, maxSeq)
			case k+1 < len(in) && in[k+1] == '\\':
				return k + 2, body, c == ']' && fits(body, 2, maxSeq)
			}
			i = k // ESC not followed by "\": abandons this and opens another
			continue
		case c >= 0x20 && c <= 0x2f:
			k := j + 1
			for k < len(in) && (in[k] >= 0x20 && in[k] <= 0x2f || in[k] == 0x7f) {
				k++
			}
			if k < len(in) && in[k] >= 0x30 && in[k] <= 0x7e {
				return k + 1, nil, false
			}
			return k, nil, false
		case c >= 0x30 && c <= 0x7e:
			return j + 1, nil, false
		default:
			return j, nil, false
		}
	}
}

func fits(payload []byte, termLen, maxSeq int) bool {
	return len(payload) <= MaxOSCPayload && (maxSeq < 1 || 2+len(payload)+termLen <= maxSeq)
}

type nopSink struct{ n, osc int }

func (s *nopSink) Text(b []byte)      { s.n += len(b) }
func (s *nopSink) OSC(payload []byte) { s.osc++ }

// sampleOutput is mostly-ASCII terminal output as a PTY delivers it: CRLF
// line ends, some colour, a prompt marker now and then, a little UTF-8.
func sampleOutput(n int) []byte {
	lines := []string{
		"drwxr-xr-x  5 user group  4096 Nov 29 22:20 \x1b[01;34msrc\x1b[0m\r\n",
		"-rw-r--r--  1 user group 12034 Nov 29 22:20 README.md\r\n",
		"ok  \tgithub.com/ptyactor/ptyactor/backend/local/termtext\t0.412s\r\n",
		"    at Object.<anonymous> (/home/user/project/src/index.js:12:15)\r\n",
		"2026-11-29T22:20:54.123Z INFO request served path=/api/v1/sessions status=200 dur=1.2ms\r\n",
		"\x1b]133;D;0\x07dsh> ls -la\r\n",
		"Compiling ptyactor v0.1.0 (/home/user/ptyactor) — 3 warnings\r\n",
	}
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = append(b, lines[i%len(lines)]...)
	}
	return b[:n]
}

func BenchmarkFeed(b *testing.B) {
	inputs := []struct {
		name string
		data []byte
	}{
		{"terminal", sampleOutput(1 << 20)},
		{"ascii", bytes.Repeat([]byte(strings.Repeat("x", 79)+"\n"), (1<<20)/80)},
		{"utf8", bytes.Repeat([]byte("Grüße, 世界! Ünïcödé — テキスト\n"), (1<<20)/44)},
	}
	for _, in := range inputs {
		for _, chunk := range []int{4096, 65536} {
			b.Run(fmt.Sprintf("%s/chunk=%d", in.name, chunk), func(b *testing.B) {
				p := New(1 << 18)
				var s nopSink
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				for b.Loop() {
					for i := 0; i < len(in.data); i += chunk {
						p.Feed(in.data[i:min(i+chunk, len(in.data))], &s)
					}
				}
			})
		}
	}
}
