package local

import (
	"fmt"
	"testing"
)

// A send's output on a full screen: the command, its output and the
// prompt, without the screen's older lines, and within MaxReadBytes.
func TestSendOutputOnAFullScreen(t *testing.T) {
	s := outputPath(256<<10, testNonce)
	var err error
	if s.screen, err = newScreen(40, 160, s.cfg, nil, s.prompt); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		s.feed(fmt.Appendf(nil, "$ echo %d\r\n%d\r\n", i, i))
	}
	s.feed([]byte("$ "))
	s.collect()
	s.feed([]byte("printf 'a\\rb\\n'\r\nb\r\n$ "))
	if r := s.endOutput(); r.Delta != "printf 'a\\rb\\n'\nb\n$ " || r.Truncated || r.Cursor != uint64(s.screen.FinalLines()) {
		t.Fatalf("%+v", r)
	}
}

// BenchmarkSendOutput is the transcript's part of one send on a full
// screen: BeginSend's look at the cursor, the output applied, EndSend.
func BenchmarkSendOutput(b *testing.B) {
	s := outputPath(256<<10, testNonce)
	s.screen, _ = newScreen(40, 160, s.cfg, nil, s.prompt)
	for i := range 100 {
		s.feed(fmt.Appendf(nil, "$ echo %d\r\n%d\r\n", i, i))
	}
	s.feed([]byte("$ "))
	b.ReportAllocs()
	for b.Loop() {
		s.collect()
		s.feed([]byte("echo hi\r\nhi\r\n$ "))
		s.endOutput()
	}
}
