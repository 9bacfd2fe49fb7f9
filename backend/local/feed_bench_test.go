package local

import (
	"fmt"
	"strconv"
	"testing"
)

// BenchmarkFeedPath times a session's feed (everything the pump does with
// a read under the session's lock) on `seq 1 300000` as a PTY delivers it,
// in 4 KiB reads, between two prompts: the cost per byte of parsing a
// flood once.
func BenchmarkFeedPath(b *testing.B) {
	var data []byte
	data = append(data, "$ seq 1 300000\r\n"...)
	for i := 1; i <= 300000; i++ {
		data = strconv.AppendInt(data, int64(i), 10)
		data = append(data, "\r\n"...)
	}
	data = fmt.Appendf(data, "%s%s", marker("0", testNonce), PromptText)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := outputPath(1<<20, testNonce)
		if s.screen.Resize(40, 160) != nil {
			b.Fatal("resize")
		}
		for i := 0; i < len(data); i += 4096 {
			s.feed(data[i:min(i+4096, len(data))])
		}
		if !s.prompt.complete() {
			b.Fatal("the prompt after the flood was not seen")
		}
	}
}
