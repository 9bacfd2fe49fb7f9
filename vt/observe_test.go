package vt

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"
)

// event is one observer call; adjacent Text calls are merged, because how
// text is divided between calls is not part of the contract.
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

// observer records what an Emulator reports and checks every call against
// the contract of Options.OSC and Options.Text. wants decides what OSC and
// Text return (nil: always watch); a Text call while the observer did not
// ask for text is an error.
type observer struct {
	t        testing.TB
	events   []event
	watching bool
	wants    func(o *observer, osc bool, b []byte) bool
}

func (o *observer) options() Options {
	return Options{OSC: o.osc, Text: o.text}
}

func (o *observer) want(osc bool, b []byte) bool {
	if o.wants == nil {
		o.watching = true
	} else {
		o.watching = o.wants(o, osc, b)
	}
	return o.watching
}

func (o *observer) osc(p []byte) bool {
	if len(p) > MaxOSCPayload {
		o.t.Errorf("OSC payload of %d bytes exceeds MaxOSCPayload", len(p))
	}
	if i := bytes.IndexFunc(p, func(r rune) bool { return r < 0x20 }); i >= 0 {
		o.t.Errorf("OSC(%q) holds control %#x", p, p[i])
	}
	o.events = append(o.events, event{osc: true, data: string(p)})
	return o.want(true, p)
}

func (o *observer) text(b []byte) bool {
	if !o.watching {
		o.t.Errorf("Text(%q) while the observer did not watch", b)
	}
	checkObserved(o.t, b)
	if n := len(o.events); n > 0 && !o.events[n-1].osc {
		o.events[n-1].data += string(b)
	} else {
		o.events = append(o.events, event{data: string(b)})
	}
	return o.want(false, b)
}

// checkObserved holds one Text call to its contract: one C0 control or
// DEL alone, or valid UTF-8 without any.
func checkObserved(t testing.TB, b []byte) {
	t.Helper()
	switch {
	case len(b) == 0:
		t.Errorf("Text called with an empty slice")
	case len(b) == 1 && (b[0] < 0x20 || b[0] == del):
		if b[0] == esc {
			t.Errorf("Text(%q): ESC is never executed", b)
		}
	case !utf8.Valid(b):
		t.Errorf("Text(%q) is not valid UTF-8", b)
	case bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 || r == del }):
		t.Errorf("Text(%q) mixes controls with text", b)
	}
}

// observe feeds input cut into chunks of the given sizes (the rest goes in
// one last chunk) to a 4×10 emulator and returns what o saw. An empty OSC
// first, not reported, asks o whether it watches from the start.
func observe(t testing.TB, o *observer, input []byte, sizes ...int) []event {
	t.Helper()
	o.t = t
	e, err := New(4, 10, o.options())
	if err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte("\x1b]\x07"))
	o.events = nil
	for _, n := range sizes {
		n = min(max(n, 1), len(input))
		e.Feed(input[:n])
		input = input[n:]
	}
	e.Feed(input)
	return o.events
}

func txt(s string) event { return event{data: s} }
func osc(s string) event { return event{osc: true, data: s} }

var observeCases = []struct {
	name string
	in   string
	want []event
}{
	{"empty", "", nil},
	{"plain", "hello, world", []event{txt("hello, world")}},
	{"controls are reported", "a\tb\bc\r\n\x00\x07\x7f", []event{txt("a\tb\bc\r\n\x00\x07\x7f")}},
	{"escapes are not", "a\x1b[31mb\x1b7\x1b(0c\x1bPdcs\x1b\\d", []event{txt("abcd")}},
	{"OSC with BEL", "out\x1b]133;D;0;n\x07$ ", []event{txt("out"), osc("133;D;0;n"), txt("$ ")}},
	{"OSC with ST", "\x1b]0;title\x1b\\x", []event{osc("0;title"), txt("x")}},
	{"empty OSC", "\x1b]\x07", []event{osc("")}},
	{"controls inside an OSC are ignored", "\x1b]1\n3\x013\x07", []event{osc("133")}},
	{"controls inside a CSI are executed", "\x1b[1\r\n2mx", []event{txt("\r\nx")}},
	{"CAN cancels an OSC", "\x1b]0;t\x18x", []event{txt("x")}},
	{"ESC abandons an OSC", "\x1b]0;t\x1b[mx", []event{txt("x")}},
	{"too long an OSC is dropped", "\x1b]" + string(bytes.Repeat([]byte("x"), MaxOSCPayload+1)) + "\x07y", []event{txt("y")}},
	{"longest OSC", "\x1b]" + string(bytes.Repeat([]byte("x"), MaxOSCPayload)) + "\x07", []event{osc(string(bytes.Repeat([]byte("x"), MaxOSCPayload)))}},
	{"UTF-8", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", []event{txt("hé € 😀")}},
	{"malformed UTF-8", "a\xffb\xe2\x82c\xe2\x1b[m", []event{txt("a\ufffdb\ufffd\ufffdc\ufffd")}},
	{"a non-ASCII byte ends an escape", "\x1b\xc3\xa9", []event{txt("é")}},
}

func TestObserve(t *testing.T) {
	for _, tc := range observeCases {
		in := []byte(tc.in)
		if got := observe(t, &observer{}, in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if ref := reference(in); !reflect.DeepEqual(ref, tc.want) {
			t.Errorf("%s: the reference model gives %v, want %v", tc.name, ref, tc.want)
		}
		for i := 1; i < len(in); i++ {
			if got := observe(t, &observer{}, in, i); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s split at %d: got %v, want %v", tc.name, i, got, tc.want)
			}
		}
	}
}

// TestObserveWatch: Text is called only after OSC asked for it, and no
// more once it returned false; the next OSC may ask again.
func TestObserveWatch(t *testing.T) {
	stops := &observer{wants: func(o *observer, isOSC bool, b []byte) bool {
		return isOSC && string(b) == "on" || !isOSC && b[0] != 0x01
	}}
	got := observe(t, stops, []byte("before\x1b]on\x07seen\r\nseen\x01unseen\x1b]off\x07unseen\x1b]on\x07again"))
	// Nothing is watched before an OSC asked for it.
	first := &observer{}
	if e, _ := New(4, 10, first.options()); e != nil {
		e.Feed([]byte("before"))
	}
	if first.events != nil {
		t.Fatalf("seen before any OSC: %v", first.events)
	}
	want := []event{osc("on"), txt("seen\r\nseen\x01"), osc("off"), osc("on"), txt("again")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Without a Text observer, OSC's answer asks for nothing.
	e, err := New(4, 10, Options{OSC: func([]byte) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	e.Feed([]byte("\x1b]x\x07text"))
	if e.watch {
		t.Fatal("watching without a Text observer")
	}
}

// FuzzParser checks what the parser reports to an observer, for arbitrary
// input and an arbitrary chunking derived from cuts: no panic; every call
// honours the contract (OSC payloads bounded, without controls; Text is
// one control alone or valid UTF-8 without controls); the events do not
// depend on the chunking (whole input, 1-byte chunks, the fuzzed chunks);
// they equal the reference model; and an observer that watches only now
// and then is never called while it does not watch, and sees the same
// for every chunking.
func FuzzParser(f *testing.F) {
	for _, tc := range observeCases {
		f.Add([]byte(tc.in), []byte{3, 1, 4, 1, 5})
	}
	for _, tc := range oracleCases {
		f.Add([]byte(tc.in), []byte{2, 7, 1, 8})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		if len(data) > 4096 {
			return
		}
		var sizes []int
		for _, c := range cuts {
			sizes = append(sizes, int(c)%32)
		}
		bytewise := make([]int, len(data))
		for i := range bytewise {
			bytewise[i] = 1
		}
		now := func() *observer {
			// Watch after an OSC of even length, until a control whose
			// value the first cut divides: what decides is in the
			// stream, not in how text is divided between calls.
			k := byte(3)
			if len(cuts) > 0 {
				k = 1 + cuts[0]%8
			}
			return &observer{wants: func(o *observer, isOSC bool, b []byte) bool {
				if isOSC {
					return len(b)%2 == 0
				}
				return len(b) != 1 || b[0] >= 0x20 || b[0]%k != 0
			}}
		}
		for _, mk := range []func() *observer{func() *observer { return &observer{} }, now} {
			want := observe(t, mk(), data)
			for _, sz := range [][]int{bytewise, sizes} {
				if got := observe(t, mk(), data, sz...); !reflect.DeepEqual(got, want) {
					t.Fatalf("chunks %v differ:\n got %v\nwant %v", sz, got, want)
				}
			}
		}
		if got, ref := observe(t, &observer{}, data), reference(data); !reflect.DeepEqual(got, ref) {
			t.Fatalf("the reference model differs:\n got %v\nwant %v", got, ref)
		}
	})
}

// reference is a byte-at-a-time model of what an observer that always
// watches sees, written from the DEC state machine rather than from the
// parser's code: ground text is decoded as UTF-8 where a control or an
// escape interrupts it (an incomplete character at the very end is held
// back, as the parser carries it to the next chunk); C0 controls are
// executed in the ground state and inside ESC and CSI sequences, and
// ignored inside strings.
func reference(in []byte) []event {
	const (
		ground = iota
		escape
		escInt
		csi
		oscStr
		oscEsc
		str
		strEsc
	)
	var out []event
	addText := func(s string) {
		if n := len(out); n > 0 && !out[n-1].osc {
			out[n-1].data += s
		} else {
			out = append(out, txt(s))
		}
	}
	var pend, payload []byte
	flush := func(final bool) {
		for len(pend) > 0 {
			if final && !utf8.FullRune(pend) {
				return
			}
			r, n := utf8.DecodeRune(pend)
			addText(string(r))
			pend = pend[n:]
		}
	}
	st := ground
	for i := 0; i < len(in); i++ {
		c := in[i]
		cancel := c == can || c == sub
		control := c < 0x20 && c != esc && !cancel
		switch st {
		case ground:
			switch {
			case c >= 0x20 && c != del:
				pend = append(pend, c)
			case c == esc:
				flush(false)
				st = escape
			default:
				flush(false)
				addText(string(c))
			}
		case escape, escInt, csi:
			switch {
			case c >= 0x80 && st != csi:
				st = ground
				i--
			case c >= 0x80, c == del:
			case c == esc:
				st = escape
			case cancel:
				st = ground
			case control:
				addText(string(c))
			case st == escape && c == '[':
				st = csi
			case st == escape && c == ']':
				st, payload = oscStr, payload[:0]
			case st == escape && (c == 'P' || c == 'X' || c == '^' || c == '_'):
				st = str
			case st != csi && c < 0x30, st == csi && c < 0x40:
				if st == escape {
					st = escInt
				}
			default: // a final byte
				st = ground
			}
		case oscStr:
			switch {
			case c == bel:
				if len(payload) <= MaxOSCPayload {
					out = append(out, osc(string(payload)))
				}
				st = ground
			case c == esc:
				st = oscEsc
			case cancel:
				st = ground
			case c >= 0x20:
				payload = append(payload, c)
			}
		case oscEsc, strEsc:
			if c == '\\' {
				if st == oscEsc && len(payload) <= MaxOSCPayload {
					out = append(out, osc(string(payload)))
				}
				st = ground
			} else {
				st = escape
				i--
			}
		case str:
			switch {
			case c == esc:
				st = strEsc
			case cancel:
				st = ground
			}
		}
	}
	flush(true)
	return out
}
