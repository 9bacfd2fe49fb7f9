package record

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var epoch = time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return epoch.Add(time.Hour) }

func intp(i int) *int { return &i }

// session returns one event of every kind the caller appends, Seq from 1;
// the output splits "é" (0xC3 0xA9) across two reads.
func session() []Event {
	evs := []Event{
		{Kind: KindStart, Rows: 24, Cols: 80, Start: &Start{Session: "s1", Term: "xterm-256color", Shell: "bash"}},
		{Kind: KindOutput, Data: "$ "},
		{Kind: KindSend, Send: &Send{Ticket: 7, Lines: []string{"echo caf\u00e9", "second"}}},
		{Kind: KindInput, Data: "echo café\r", Source: SourceAgent},
		{Kind: KindOutput, Data: "echo café\r\ncaf\xc3"},
		{Kind: KindOutput, Data: "\xa9\r\n"},
		{Kind: KindPrompt, ExitCode: intp(0)},
		{Kind: KindSettle, Settle: &Settle{Ticket: 7, Reason: "prompt", ExitCode: intp(0), Duration: 1500 * time.Millisecond}},
		{Kind: KindResize, Rows: 30, Cols: 100},
		{Kind: KindInput, Secret: true, Len: 6, Source: SourceHuman + "ann"},
		{Kind: KindForeign, Data: "ls\r"},
		{Kind: KindSignal, Signal: &Signal{Name: "SIGINT", Target: 42, Source: SourceAgent}},
		{Kind: KindMark, Data: "checkpoint one"},
		{Kind: KindOutput, Data: "\x1b[1;31mred\x1b[0m bye\r\n"},
		{Kind: KindExit, Exit: &Exit{Code: intp(3)}},
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
		evs[i].Mono = time.Duration(i) * 100 * time.Millisecond
		evs[i].Wall = epoch.Add(evs[i].Mono)
	}
	return evs
}

// writeRecord writes evs as a closed record at a new path in dir.
func writeRecord(t *testing.T, dir string, opts Options, evs []Event) (string, Summary) {
	t.Helper()
	path := filepath.Join(dir, "s1.rec")
	if opts.Clock == nil {
		opts.Clock = fixedClock
	}
	w, err := NewWriter(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
		// With Options.Screens, a screen that says which event it follows
		// (flushed first: the writer asks once it wrote a full segment).
		if opts.Screens && w.Flush(context.Background()) == nil && w.WantsScreen() {
			cp := &Checkpoint{Screen: []string{fmt.Sprintf("screen after %d", ev.Seq)}}
			if err := w.Append(Event{Kind: KindCheckpoint, Checkpoint: cp}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return path, sum
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func flush(t *testing.T, w *Writer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
