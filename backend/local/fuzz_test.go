package local

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/backend/local/scrollback"
	"github.com/ptyactor/ptyactor/backend/local/termtext"
	"github.com/ptyactor/ptyactor/messages"
)

// outputPath is the part of a session that a PTY read goes through, built
// without a PTY: the session's own Sink methods (Text, OSC) over its parser,
// scrollback, send tail and prompt tracker, fed the way consume feeds them.
// Only the facts consume reports (Output, Prompt) are left out: they need a
// terminal to resolve the foreground group.
func outputPath(maxRead int, nonce string) *session {
	cfg := messages.DefaultConfig()
	return &session{
		parser:     termtext.New(maxRead),
		scroll:     scrollback.New(cfg.ScrollbackLines, max(maxRead, 64), maxRead),
		tail:       scrollback.NewTail(maxRead),
		prompt:     newPromptTracker(nonce),
		collecting: true,
	}
}

// feedChunks feeds data in chunks of the given sizes (0 is read as 1; the
// rest goes in one last chunk) and calls after once per chunk.
func feedChunks(s *session, data []byte, sizes []int, after func()) {
	for len(data) > 0 {
		n := len(data)
		if len(sizes) > 0 {
			n = min(max(sizes[0], 1), len(data))
			sizes = sizes[1:]
		}
		s.mu.Lock()
		s.parser.Feed(data[:n], s)
		s.mu.Unlock()
		data = data[n:]
		after()
	}
}

// sendResult is what a send would hand the caller from one stream.
type sendResult struct {
	delta     string
	truncated bool
	complete  bool
	page      string
}

// FuzzOutputPath checks the whole output path of a send, for arbitrary bytes
// and an arbitrary chunking of them (the split points are fuzzed too):
//
//   - the send's delta and a scrollback page are valid UTF-8 without ESC,
//     BEL or CR;
//   - the send's buffer never holds more than maxReadBytes, after any chunk
//     (its memory is bounded by the configuration, not by the input);
//   - a read page is at most maxReadBytes;
//   - the delta, its truncation flag, the page and the prompt evidence do
//     not depend on where the reads were split.
func FuzzOutputPath(f *testing.F) {
	f.Add([]byte("ls\r\nfile\r\n"+marker("0", testNonce)+PromptText), []byte{1, 2, 3}, uint8(0))
	f.Add([]byte("h\xc3\xa9llo \xe2\x82\xac\x1b[31mred\x1b[0m\r\n\xff\xfe"), []byte{1}, uint8(3))
	f.Add([]byte("\x1b]0;title\x07abc\x1bPdcs\x1b\\def\r\rghi\n"), []byte{5, 0, 7}, uint8(9))
	f.Add(bytes.Repeat([]byte("\xf0\x9f\x98\x80x"), 40), []byte{3, 3, 1}, uint8(16))
	f.Add([]byte("\x1b]133;D;0;"+testNonce+"\x1b\\$ "), []byte{12, 1}, uint8(40))
	f.Fuzz(func(t *testing.T, data, cuts []byte, small uint8) {
		if len(data) > 2048 {
			return
		}
		// Small bounds exercise truncation; the unit is maxReadBytes.
		maxRead := 16 + int(small)
		run := func(sizes []int) sendResult {
			s := outputPath(maxRead, testNonce)
			feedChunks(s, data, sizes, func() {
				if n := s.tail.Len(); n > maxRead {
					t.Fatalf("send buffer holds %d bytes, maxReadBytes is %d", n, maxRead)
				}
			})
			s.mu.Lock()
			defer s.mu.Unlock()
			// Flush ends the stream: what a session does when its shell
			// exited and the last read was parsed.
			s.parser.Flush(s)
			var r sendResult
			r.complete = s.prompt.complete()
			r.delta, r.truncated = s.tail.Take()
			r.page = s.scroll.Page(0, messages.DefaultReadCount).Text
			if n := s.scroll.Bytes(); n > max(maxRead, 64) {
				t.Fatalf("scrollback holds %d bytes, its bound is %d", n, max(maxRead, 64))
			}
			return r
		}
		want := run(nil)
		for _, text := range []string{want.delta, want.page} {
			if !utf8.ValidString(text) {
				t.Fatalf("output %q is not valid UTF-8", text)
			}
			if i := bytes.IndexAny([]byte(text), "\x1b\x07\r"); i >= 0 {
				t.Fatalf("output %q holds control byte %q at %d", text, text[i], i)
			}
		}
		if len(want.delta) > maxRead || len(want.page) > maxRead {
			t.Fatalf("delta %d / page %d bytes exceed maxReadBytes %d", len(want.delta), len(want.page), maxRead)
		}
		var sizes []int
		for _, c := range cuts {
			sizes = append(sizes, int(c)%48)
		}
		bytewise := make([]int, len(data))
		for i := range bytewise {
			bytewise[i] = 1
		}
		for _, sz := range [][]int{sizes, bytewise} {
			if got := run(sz); got != want {
				t.Fatalf("chunks %v changed the result:\n got %+v\nwant %+v", sz, got, want)
			}
		}
	})
}

// FuzzPromptMarker checks the marker matcher: no stream settles a send
// unless it carries the session's nonce in a marker. The stream is built as
// text before, a marker whose nonce the fuzzer mutates (and whose status
// field it chooses), and text after, so the fuzzer spends its time on near
// misses (one byte off, a prefix, an extension, the wrong terminator)
// instead of on random bytes that never reach the matcher; chunk boundaries
// are fuzzed as well. A stream that completes the prompt must contain
// "133;D;" followed by a status and ";"+nonce, contiguously; and whether it
// completes does not depend on the chunking.
func FuzzPromptMarker(f *testing.F) {
	f.Add([]byte("ls\r\n"), []byte("0"), []byte(testNonce), []byte("\x07"+PromptText), []byte{4})
	f.Add([]byte(""), []byte("0"), []byte(testNonce[:len(testNonce)-1]), []byte("\x07"+PromptText), []byte{1})
	f.Add([]byte(""), []byte("127"), []byte(testNonce+"0"), []byte("\x1b\\"+PromptText), []byte{3, 9})
	f.Add([]byte("x"), []byte("256"), []byte(testNonce), []byte("\x07"+PromptText), []byte{0})
	f.Add([]byte(""), []byte("-1"), []byte(testNonce), []byte("\x07$ "), []byte{2})
	f.Add([]byte(""), []byte("0"), []byte("0123456789ABCDEF01234567"), []byte("\x07$ "), []byte{7})
	f.Add([]byte("\x1b]133;D;0;"), []byte("0"), []byte(testNonce), []byte("\x07$  "), []byte{2})
	f.Fuzz(func(t *testing.T, pre, status, nonce, post, cuts []byte) {
		if len(pre)+len(status)+len(nonce)+len(post) > 4096 {
			return
		}
		var stream []byte
		stream = append(stream, pre...)
		stream = append(stream, "\x1b]"+markerPrefix...)
		stream = append(stream, status...)
		stream = append(stream, ';')
		stream = append(stream, nonce...)
		stream = append(stream, post...)

		complete := func(sizes []int) (ever, end bool) {
			s := outputPath(1<<14, testNonce)
			feedChunks(s, stream, sizes, func() {
				if s.prompt.complete() {
					ever = true
				}
			})
			return ever, s.prompt.complete()
		}
		ever, end := complete(nil)
		var sizes []int
		for _, c := range cuts {
			sizes = append(sizes, int(c)%16)
		}
		ever2, end2 := complete(sizes)
		if end2 != end {
			t.Fatalf("chunks %v: complete at the end %v, whole stream %v", sizes, end2, end)
		}
		if ever || ever2 {
			if !markerIn(stream, []byte(testNonce)) {
				t.Fatalf("prompt completed on a stream without a marker carrying the nonce: %q", stream)
			}
		}
	})
}

// markerIn reports whether b contains a complete marker OSC,
// "ESC ] 133;D;<digits>;<nonce>" terminated by BEL or ESC \. It is written
// independently of promptTracker.parse, as a plain scan of the raw bytes.
func markerIn(b, nonce []byte) bool {
	open := []byte("\x1b]" + markerPrefix)
	for {
		i := bytes.Index(b, open)
		if i < 0 {
			return false
		}
		b = b[i+len(open):]
		j := 0
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || j == 0 && (b[j] == '+' || b[j] == '-')) {
			j++
		}
		rest := b[j:]
		if j > 0 && len(rest) > 0 && rest[0] == ';' && bytes.HasPrefix(rest[1:], nonce) {
			after := rest[1+len(nonce):]
			if bytes.HasPrefix(after, []byte{0x07}) || bytes.HasPrefix(after, []byte("\x1b\\")) {
				return true
			}
		}
	}
}
