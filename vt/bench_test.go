package vt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// seqOutput is what `seq 1 n` prints through a terminal (LF becomes CR LF).
func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\r\n", i)
	}
	return b.Bytes()
}

// colourOutput is colour-heavy output, like `ls --color` or a compiler's
// diagnostics: an SGR sequence around every word.
func colourOutput(size int) []byte {
	var b bytes.Buffer
	for b.Len() < size {
		for i := range 6 {
			fmt.Fprintf(&b, "\x1b[1;%dm%s\x1b[0m  ", 31+i, "main_test.go")
		}
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// fullScreenOutput draws a 40×160 screen on the alternate screen, row by
// row with cursor positioning and colours, frames times, as top does.
func fullScreenOutput(frames int) []byte {
	var b bytes.Buffer
	b.WriteString("\x1b[?1049h\x1b[?1h\x1b=")
	for f := range frames {
		b.WriteString("\x1b[H")
		for y := 1; y <= 40; y++ {
			fmt.Fprintf(&b, "\x1b[%d;1H\x1b[7m%5d\x1b[0m %s\x1b[K", y, f*40+y, strings.Repeat("x", 150))
		}
	}
	return b.Bytes()
}

// colourScreen fills a 40×160 main screen with coloured cells, each
// with its own pen: the 16 colours in turn, bold on every other row, as
// syntax-highlighted text draws; with many, a 256-colour foreground that
// changes every cell and a 24-bit background that changes every row (a
// colour test: 10,240 pens).
func colourScreen(many bool) []byte {
	var b bytes.Buffer
	for y := range 40 {
		fmt.Fprintf(&b, "\x1b[%dH", y+1)
		if many {
			fmt.Fprintf(&b, "\x1b[48;2;%d;0;0m", y*6)
		}
		for x := range 160 {
			switch {
			case many:
				fmt.Fprintf(&b, "\x1b[38;5;%dm", (y*160+x)%256)
			default:
				fmt.Fprintf(&b, "\x1b[%d;%dm", 21+y%2, 30+x%8+60*(x/8%2))
			}
			b.WriteByte(byte('a' + x%26))
		}
	}
	b.WriteString("\x1b[m")
	return b.Bytes()
}

// BenchmarkFeed feeds output in 4 KiB chunks, as PTY reads arrive, and
// times a raw read loop over the same chunks in the same run (copying each
// chunk and nothing else): vt-MB/s against copy-MB/s.
func BenchmarkFeed(b *testing.B) {
	for _, in := range []struct {
		name string
		data []byte
	}{
		{"seq", seqOutput(300000)},
		{"colour", colourOutput(2 << 20)},
		{"fullscreen", fullScreenOutput(50)},
	} {
		b.Run(in.name, func(b *testing.B) {
			buf := make([]byte, 4096)
			var vt, raw time.Duration
			b.SetBytes(int64(len(in.data)))
			for b.Loop() {
				e, _ := New(40, 160, Options{})
				start := time.Now()
				for i := 0; i < len(in.data); i += len(buf) {
					e.Feed(in.data[i:min(i+len(buf), len(in.data))])
				}
				vt += time.Since(start)
				start = time.Now()
				for i := 0; i < len(in.data); i += len(buf) {
					copy(buf, in.data[i:min(i+len(buf), len(in.data))])
				}
				raw += time.Since(start)
			}
			mb := float64(len(in.data)) * float64(b.N) / 1e6
			b.ReportMetric(mb/vt.Seconds(), "vt-MB/s")
			b.ReportMetric(mb/raw.Seconds(), "copy-MB/s")
		})
	}
}

// BenchmarkPTY reads `seq 1 300000` from a real PTY, as a session's
// output pump does, alternating in one run between a raw read loop and the
// same loop feeding the emulator: raw-MB/s against vt-MB/s. This is the
// comparison the flood bar of issue 15 is about (the emulator against the
// PTY, not against memcpy).
func BenchmarkPTY(b *testing.B) {
	if _, err := exec.LookPath("seq"); err != nil {
		b.Skip("no seq")
	}
	var raw, vt time.Duration
	var n int64
	for b.Loop() {
		for _, feed := range []bool{false, true} {
			start := time.Now()
			k := readSeq(b, feed)
			if feed {
				vt += time.Since(start)
			} else {
				raw += time.Since(start)
				n += k
			}
		}
	}
	b.ReportMetric(float64(n)/1e6/raw.Seconds(), "raw-MB/s")
	b.ReportMetric(float64(n)/1e6/vt.Seconds(), "vt-MB/s")
	b.ReportMetric(raw.Seconds()/vt.Seconds(), "vt/raw")
}

// readSeq runs seq on a PTY and reads its output to the end, feeding an
// emulator if feed is set, and returns the bytes read.
func readSeq(b *testing.B, feed bool) int64 {
	b.Helper()
	cmd := exec.Command("seq", "1", "300000")
	f, err := pty.Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	e, _ := New(40, 160, Options{})
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		if feed {
			e.Feed(buf[:k])
		}
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return n
}

// heapOf returns the heap bytes that n values made by mk keep alive, per value.
func heapOf(n int, mk func() any) uint64 {
	keep := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = mk()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return (after.HeapAlloc - before.HeapAlloc) / uint64(n)
}

// TestMemory holds an idle 40×160 emulator under 100 KiB and reports what
// a session costs in the states it goes through.
func TestMemory(t *testing.T) {
	newIdle := func() *Emulator {
		e, err := New(40, 160, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	idle := heapOf(100, func() any { return newIdle() })
	prompt := heapOf(100, func() any { e := newIdle(); e.Feed([]byte("$ ")); return e })
	full := heapOf(10, func() any { e := newIdle(); e.Feed(fullScreenOutput(1)); return e })
	after := heapOf(10, func() any {
		e := newIdle()
		e.Feed(fullScreenOutput(1))
		e.Feed([]byte("\x1b[?1049l"))
		return e
	})
	coloured := heapOf(10, func() any { e := newIdle(); e.Feed(colourScreen(false)); return e })
	colourTest := heapOf(10, func() any { e := newIdle(); e.Feed(colourScreen(true)); return e })
	allocs := testing.AllocsPerRun(100, func() { newIdle() })
	t.Logf("40x160: new %d B (%v allocs), at a prompt %d B, full-screen program %d B, after it left %d B, "+
		"coloured screen (32 pens) %d B, colour test (10,240 pens) %d B",
		idle, allocs, prompt, full, after, coloured, colourTest)
	if idle >= 100<<10 || prompt >= 100<<10 || after >= 100<<10 {
		t.Errorf("an idle emulator costs %d B (at a prompt %d B, after a full-screen program %d B), bound 100 KiB",
			idle, prompt, after)
	}
}
