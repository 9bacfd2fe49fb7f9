package local

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

// outputPath is the part of a session that a PTY read goes through, built
// without a PTY: the session's own feed (the emulator, with the prompt
// tracker as its observer) and transcript readers, on a
// small terminal whose history is bounded like scrollback. Only the facts
// consume reports (Output, Prompt) are left out: they need a terminal to
// resolve the foreground group.
func outputPath(maxRead int, nonce string) *session {
	cfg := messages.DefaultConfig()
	cfg.MaxReadBytes = maxRead
	cfg.ScrollbackMaxBytes = max(maxRead, 64)
	s := &session{
		cfg:    cfg,
		prompt: newPromptTracker(nonce),
		send:   sendOutput{collecting: true},
	}
	var err error
	if s.screen, err = newScreen(4, 20, cfg, nil, s.prompt); err != nil {
		panic(err)
	}
	return s
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
		s.feed(data[:n])
		s.mu.Unlock()
		data = data[n:]
		after()
	}
}

// sendResult is what a send would hand the caller from one stream.
type sendResult struct {
	delta     string
	truncated bool
	omitted   [2]uint64
	complete  bool
	page      string
	since     string
}

// clean fails unless text is valid UTF-8 without ESC, BEL or CR, within
// maxRead bytes.
func clean(t *testing.T, what, text string, maxRead int) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Fatalf("%s %q is not valid UTF-8", what, text)
	}
	if i := strings.IndexAny(text, "\x1b\x07\r"); i >= 0 {
		t.Fatalf("%s %q holds control byte %q at %d", what, text, text[i], i)
	}
	if len(text) > maxRead {
		t.Fatalf("%s of %d bytes exceeds maxReadBytes %d", what, len(text), maxRead)
	}
}

// FuzzOutputPath checks the whole output path of a send, for arbitrary bytes
// and an arbitrary chunking of them (the split points are fuzzed too), with
// the send begun at a fuzzed point of the stream:
//
//   - the send's output (TakeOutput after every chunk, EndSend), a
//     scrollback page and a cursor read are valid UTF-8 without ESC, BEL or
//     CR, and each is at most maxReadBytes (the emulator's own memory is
//     bounded by its history, which FuzzEmulator checks);
//   - the send's output, its truncation and omitted range, the page, the
//     cursor read and the prompt evidence do not depend on where the reads
//     were split.
func FuzzOutputPath(f *testing.F) {
	f.Add([]byte("ls\r\nfile\r\n"+marker("0", testNonce)+PromptText), []byte{1, 2, 3}, uint8(0))
	f.Add([]byte("h\xc3\xa9llo \xe2\x82\xac\x1b[31mred\x1b[0m\r\n\xff\xfe"), []byte{1}, uint8(3))
	f.Add([]byte("\x1b]0;title\x07abc\x1bPdcs\x1b\\def\r\rghi\n"), []byte{5, 0, 7}, uint8(9))
	f.Add(bytes.Repeat([]byte("\xf0\x9f\x98\x80x"), 40), []byte{3, 3, 1}, uint8(16))
	f.Add([]byte("\x1b]133;D;0;"+testNonce+"\x1b\\$ "), []byte{12, 1}, uint8(40))
	f.Add([]byte("$ printf 'progress 20%%\\r...'\r\nprogress 20%\rprogress 40%\rprogress 100%\r\n$ "), []byte{7, 9}, uint8(30))
	f.Add([]byte("$ man\r\nN\bNA\bAM\bME\bE\r\nabc\bX\x1b[K\r\n\x1b[2A\x1b[Kredrawn\r\n\r\n$ "), []byte{2, 11}, uint8(50))
	f.Fuzz(func(t *testing.T, data, cuts []byte, small uint8) {
		if len(data) > 2048 {
			return
		}
		// Small bounds exercise truncation; the unit is maxReadBytes.
		maxRead := 16 + int(small)
		begin := int(small) * len(data) / 256 // where the send begins
		run := func(sizes []int, take bool) sendResult {
			s := outputPath(maxRead, testNonce)
			s.send.collecting = false
			after := func() {
				if take {
					s.mu.Lock()
					r := s.takeOutput()
					s.mu.Unlock()
					clean(t, "taken output", r.Delta, maxRead)
				}
			}
			feedChunks(s, data[:begin], sizes, func() {})
			s.mu.Lock()
			s.collect()
			s.mu.Unlock()
			feedChunks(s, data[begin:], sizes, after)
			s.mu.Lock()
			defer s.mu.Unlock()
			var r sendResult
			r.complete = s.prompt.complete()
			end := s.endOutput()
			r.delta, r.truncated, r.omitted = end.Delta, end.Truncated, [2]uint64{end.OmittedFrom, end.OmittedTo}
			v, _ := s.view()
			r.page = v.Page(0, messages.DefaultReadCount, maxRead).Text
			r.since = v.Since(0, maxRead).Text
			for what, text := range map[string]string{"output": r.delta, "page": r.page, "cursor read": r.since} {
				clean(t, what, text, maxRead)
			}
			return r
		}
		want := run(nil, false)
		var sizes []int
		for _, c := range cuts {
			sizes = append(sizes, int(c)%48)
		}
		bytewise := make([]int, len(data))
		for i := range bytewise {
			bytewise[i] = 1
		}
		for _, sz := range [][]int{sizes, bytewise} {
			if got := run(sz, false); got != want {
				t.Fatalf("chunks %v changed the result:\n got %+v\nwant %+v", sz, got, want)
			}
		}
		run(sizes, true)
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
// "ESC ] 133;D;<digits>;<nonce>" terminated by BEL or ESC \, as a terminal
// reads it: the C0 controls it executes between ESC and "]" and those it
// ignores inside the OSC (all but BEL, CAN, SUB and ESC) do not count, nor
// does DEL after ESC. It is written independently of promptTracker.parse
// and of the emulator's parser, as a plain scan of the raw bytes.
func markerIn(b, nonce []byte) bool {
	ignored := func(c byte) bool { return c < 0x20 && c != 0x07 && c != 0x18 && c != 0x1a && c != 0x1b }
	for i := range b {
		if b[i] != 0x1b {
			continue
		}
		j := i + 1
		for j < len(b) && (ignored(b[j]) || b[j] == 0x07 || b[j] == 0x7f) {
			j++
		}
		if j == len(b) || b[j] != ']' {
			continue
		}
		var payload []byte
		for j++; j < len(b); j++ {
			c := b[j]
			if c == 0x07 || c == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				if payloadIsMarker(payload, nonce) {
					return true
				}
				break
			}
			if c == 0x18 || c == 0x1a || c == 0x1b {
				break
			}
			if !ignored(c) {
				payload = append(payload, c)
			}
		}
	}
	return false
}

// payloadIsMarker reports whether p is "133;D;<digits>;<nonce>" (the
// digits may carry a sign).
func payloadIsMarker(p, nonce []byte) bool {
	rest, ok := bytes.CutPrefix(p, []byte(markerPrefix))
	if !ok {
		return false
	}
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || j == 0 && (rest[j] == '+' || rest[j] == '-')) {
		j++
	}
	return j > 0 && bytes.Equal(rest[j:], append([]byte{';'}, nonce...))
}
