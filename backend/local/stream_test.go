package local

import (
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// The marker filter takes every OSC 133;D out of output, whatever the reads
// split, and leaves everything else byte for byte.
func TestMarkerFilter(t *testing.T) {
	marker := "\x1b]133;D;0;0123456789abcdef01234567\x07"
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a" + marker + "$ ", "a$ "},
		{"\x1b[1mbold\x1b[0m", "\x1b[1mbold\x1b[0m"},
		{"\x1b\x1b]133;D;1;ab\x07x", "\x1bx"},  // an ESC before the marker
		{"\x1b]133;D;2;cd\x1b\\y", "y"},        // ST terminator
		{"\x1b]133;A\x07z", "\x1b]133;A\x07z"}, // another OSC 133 stays
		{"\x1b]133;D;" + strings.Repeat("9", 200), "\x1b]133;D;" + strings.Repeat("9", 200)}, // not the shell's: too long
	}
	for _, tt := range tests {
		for split := 0; split <= len(tt.in); split++ {
			var f markerFilter
			got := string(f.strip([]byte(tt.in[:split]))) + string(f.strip([]byte(tt.in[split:])))
			if got != tt.want {
				t.Errorf("strip(%q) split at %d = %q, want %q", tt.in, split, got, tt.want)
			}
		}
	}
}

// The ring keeps the newest events within its byte bound and says when
// some after a sequence are gone.
func TestStreamRing(t *testing.T) {
	st := newStream(nil, nil, record.Event{Kind: record.KindStart})
	st.limit = 10
	for _, s := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		st.output([]byte(s))
	}
	evs, lost := st.since(0)
	// The start (1) and the first two outputs (2, 3) are gone.
	if !lost || len(evs) != 2 || evs[0].Seq != 4 || evs[1].Data != "dddd" {
		t.Fatalf("since(0) = %+v, lost %v; want events 4 and 5, lost", evs, lost)
	}
	if evs, lost := st.since(4); lost || len(evs) != 1 || evs[0].Seq != 5 {
		t.Fatalf("since(4) = %+v, lost %v", evs, lost)
	}
	if evs, lost := st.since(5); lost || len(evs) != 0 {
		t.Fatalf("since(5) = %+v, lost %v", evs, lost)
	}
}

// A real session's stream: gapless numbers, the command's echo and output,
// the prompt's exit code without its nonce, a resize, the runtime's notes
// in order, and a secret typed at `read -s` kept as its length only.
func TestStreamOverRealPTY(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	s := bs.(*session)
	waitPrompt(t, rec, 0)
	ctx := testkit.Ctx(t)

	ep := bs.BeginSend()
	if err := bs.Write(ctx, []byte("(exit 3)\r")); err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, rec, ep)
	if err := bs.(backend.Terminal).Resize(30, 100); err != nil {
		t.Fatal(err)
	}
	mark := bs.(backend.Recorder).Note(record.Event{Kind: record.KindMark, Data: "tests start"})

	ep = bs.BeginSend()
	if err := bs.Write(ctx, []byte("read -rs pw; echo got-${#pw}\r")); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "read -s to turn echo off", s.secretMode)
	const secret = "hunter2-correct-horse"
	if err := bs.Write(ctx, []byte(secret+"\r")); err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, rec, ep)

	const token = "ghp_0123456789abcdefghijklmn"
	ep = bs.BeginSend()
	if err := bs.Write(ctx, []byte("echo "+token+"\r")); err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, rec, ep)

	evs, lost := s.Events(0)
	if lost {
		t.Fatal("events lost in a short session")
	}
	var all strings.Builder
	var codes []int
	var secretLen, resized int
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: not gapless from 1", i, ev.Seq)
		}
		if i > 0 && ev.Mono < evs[i-1].Mono {
			t.Fatalf("event %d goes back in time", ev.Seq)
		}
		all.WriteString(ev.Data)
		switch ev.Kind {
		case record.KindPrompt:
			codes = append(codes, *ev.ExitCode)
		case record.KindInput:
			if ev.Secret {
				secretLen = ev.Len
			}
		case record.KindResize:
			if ev.Rows == 30 && ev.Cols == 100 {
				resized++
			}
		case record.KindMark:
			if ev.Seq != mark || ev.Data != "tests start" {
				t.Fatalf("mark %+v, want seq %d", ev, mark)
			}
		}
	}
	text := all.String()
	if strings.Contains(text, string(s.prompt.nonce)) || strings.Contains(text, "133;D") {
		t.Fatalf("the marker or its nonce reached the stream: %q", text)
	}
	if strings.Contains(text, token) || !strings.Contains(text, "[redacted 28 bytes]") {
		t.Fatalf("the token's shape was not redacted: %q", text)
	}
	if strings.Contains(text, secret) {
		t.Fatalf("the secret reached the stream: %q", text)
	}
	if secretLen != len(secret)+1 {
		t.Fatalf("secret input recorded with length %d, want %d", secretLen, len(secret)+1)
	}
	if !strings.Contains(text, "(exit 3)") || !strings.Contains(text, "got-21") {
		t.Fatalf("the commands or their output are missing: %q", text)
	}
	if len(codes) < 4 || codes[1] != 3 || codes[2] != 0 {
		t.Fatalf("prompt exit codes %v, want startup 0, then 3, then 0, then 0", codes)
	}
	if resized != 1 {
		t.Fatalf("resize events: %d, want 1", resized)
	}
	if got := s.stream.shown(); got == 0 || got > evs[len(evs)-1].Seq {
		t.Fatalf("shown %d out of range", got)
	}
}
