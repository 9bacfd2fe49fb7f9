package local

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/vt"
)

const testNonce = "0123456789abcdef01234567"

// feeder feeds output to a terminal emulator whose observer is a prompt
// tracker, as a session's does.
type feeder struct {
	e  *vt.Emulator
	pt *promptTracker
}

func newFeeder(nonce string) *feeder {
	pt := newPromptTracker(nonce)
	e, err := vt.New(24, 80, vt.Options{OSC: pt.osc, Text: pt.text})
	if err != nil {
		panic(err)
	}
	return &feeder{e: e, pt: pt}
}

// feed parses the chunks in order and returns complete() after each.
func (f *feeder) feed(chunks ...string) []bool {
	out := make([]bool, len(chunks))
	for i, c := range chunks {
		f.e.Feed([]byte(c))
		out[i] = f.pt.complete()
	}
	return out
}

// shown returns the screen's rows down to the last one that holds text:
// what the emulator printed, markers stripped.
func (f *feeder) shown() string {
	rows := f.e.Screen().Rows
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return strings.Join(rows, "\n")
}

func marker(code, nonce string) string { return "\x1b]133;D;" + code + ";" + nonce + "\x07" }

// onlyLast reports whether complete() held after the last chunk and never
// before it (so a session reports the prompt exactly once, at its end).
func onlyLast(got []bool) bool {
	for i, c := range got {
		if c != (i == len(got)-1) {
			return false
		}
	}
	return true
}

func TestPromptSplitAtEveryByte(t *testing.T) {
	for _, term := range []string{"\x07", "\x1b\\"} {
		stream := "ls\r\nfile\r\n" + strings.TrimSuffix(marker("7", testNonce), "\x07") + term + PromptText
		for i := 1; i < len(stream); i++ {
			f := newFeeder(testNonce)
			if got := f.feed(stream[:i], stream[i:]); !onlyLast(got) {
				t.Fatalf("split at %d (%q | %q): complete after each chunk %v", i, stream[:i], stream[i:], got)
			}
			if f.pt.code != 7 {
				t.Fatalf("split at %d: code %d, want 7", i, f.pt.code)
			}
			if txt := f.shown(); txt != "ls\nfile\n$" || string(f.pt.line) != PromptText {
				t.Fatalf("split at %d: shown %q, the tracker's line %q: the marker leaked or output was lost", i, txt, f.pt.line)
			}
		}
		for i := 1; i < len(stream); i++ {
			for j := i + 1; j < len(stream); j++ {
				f := newFeeder(testNonce)
				if got := f.feed(stream[:i], stream[i:j], stream[j:]); !onlyLast(got) {
					t.Fatalf("split at %d,%d: complete after each chunk %v", i, j, got)
				}
			}
		}
		// One byte at a time.
		f := newFeeder(testNonce)
		chunks := strings.Split(stream, "")
		if got := f.feed(chunks...); !onlyLast(got) {
			t.Fatalf("byte by byte: %v", got)
		}
	}
}

func TestPromptDollarThenSpaceInSeparateChunks(t *testing.T) {
	f := newFeeder(testNonce)
	if got := f.feed("out\r\n", marker("0", testNonce), "$", " "); !onlyLast(got) {
		t.Fatalf("complete after each chunk %v", got)
	}
	if f.pt.code != 0 {
		t.Fatalf("code %d", f.pt.code)
	}
}

func TestPromptTextAfterPS1Cancels(t *testing.T) {
	for _, after := range []string{"x", "\r\n", " ", "$ "} {
		f := newFeeder(testNonce)
		got := f.feed(marker("0", testNonce)+PromptText, after)
		if !got[0] || got[1] {
			t.Errorf("text %q after the prompt: complete %v, want [true false]", after, got)
		}
		// ... until the next marker.
		if got := f.feed(marker("3", testNonce), PromptText); !got[1] || f.pt.code != 3 {
			t.Errorf("after %q, the next real prompt: %v code %d", after, got, f.pt.code)
		}
	}
	// Text that is not the controlled prompt never completes.
	for _, tail := range []string{"$", "$$ ", "# ", ">>> ", "dsh> ", " $ "} {
		f := newFeeder(testNonce)
		if got := f.feed(marker("0", testNonce), tail); got[1] {
			t.Errorf("tail %q completed the prompt", tail)
		}
	}
}

func TestPromptWrongNonceNeverCompletes(t *testing.T) {
	for _, m := range []string{
		marker("0", "deadbeef"),
		marker("0", strings.Repeat("0", len(testNonce))),
		marker("0", testNonce+"0"),
		marker("0", testNonce[:len(testNonce)-1]),
		marker("0", strings.ToUpper(testNonce)),
		"\x1b]133;D;0\x07",                   // the original's marker: no nonce
		"\x1b]133;D;" + testNonce + "\x07",   // no status
		"\x1b]133;D;x;" + testNonce + "\x07", // status not a number
		"\x1b]133;D;-1;" + testNonce + "\x07",
		"\x1b]133;D;256;" + testNonce + "\x07",
		"\x1b]133;A;0;" + testNonce + "\x07",
		"\x1b]0;window title\x07",
		"\x1bP133;D;0;" + testNonce + "\x1b\\", // a DCS, not an OSC
	} {
		stream := "out\r\n" + m + PromptText
		for i := 1; i <= len(stream); i++ {
			f := newFeeder(testNonce)
			got := f.feed(stream[:i], stream[i:])
			if got[0] || got[1] {
				t.Fatalf("marker %q split at %d completed: %v", m, i, got)
			}
		}
	}
}

func TestPromptNewestMarkerWins(t *testing.T) {
	// A forged marker between the real one and the prompt is plain (empty)
	// output: the real marker still stands, and is completed.
	f := newFeeder(testNonce)
	if got := f.feed(marker("5", testNonce), marker("0", "forged"), PromptText); !got[2] || f.pt.code != 5 {
		t.Fatalf("forged marker in between: %v code %d", got, f.pt.code)
	}
	// A newer real marker replaces the older one and its status.
	f = newFeeder(testNonce)
	if got := f.feed(marker("1", testNonce)+"$", marker("2", testNonce), PromptText); !onlyLast(got) || f.pt.code != 2 {
		t.Fatalf("newer marker: %v code %d", got, f.pt.code)
	}
	// reset drops the evidence.
	f.pt.reset()
	if f.pt.complete() {
		t.Fatal("complete after reset")
	}
}

// The marker the shell prints is the one the tracker accepts: run the real
// PROMPT_COMMAND the way bash does (once at startup, then after a command
// that failed) and feed its output through the parser.
func TestPromptCommandRoundTrip(t *testing.T) {
	pc := promptCommand(3)
	if strings.Contains(pc, testNonce) {
		t.Fatalf("PROMPT_COMMAND carries the nonce: %q", pc)
	}
	// The first run reads the nonce from its descriptor and closes it.
	script := `(exit 7); eval "$PROMPT_COMMAND"; printf 'startup\n'; (exit 42); eval "$PROMPT_COMMAND"; printf '%s' "$PS1"; printf '\n--fds--\n'; if [ -e /proc/$$/fd/3 ]; then echo open; else echo closed; fi; printf '\n--env--\n'; env`
	nonceFile, err := nonceReader(testNonce)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
	cmd.ExtraFiles = []*os.File{nonceFile}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PROMPT_COMMAND=" + pc, "PS1=unexpected> ", runVar + "=" + runID}
	out, err := cmd.Output()
	nonceFile.Close()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	prompts, rest, ok := strings.Cut(string(out), "\n--fds--\n")
	fds, env, ok2 := strings.Cut(rest, "\n--env--\n")
	if !ok || !ok2 {
		t.Fatalf("output %q", out)
	}
	if fds != "closed\n" {
		t.Fatalf("the nonce's descriptor after the first prompt: %q, want closed", fds)
	}
	// A terminal gets CR LF for LF (the line discipline's onlcr).
	prompts = strings.ReplaceAll(prompts, "\n", "\r\n")
	first := newFeeder(testNonce)
	if first.feed(prompts[:strings.Index(prompts, "startup")]); !first.pt.armed || first.pt.code != 7 {
		t.Fatalf("first prompt's marker %q: code %d, want status 7", prompts, first.pt.code)
	}
	f := newFeeder(testNonce)
	if got := f.feed(prompts); !got[0] || f.pt.code != 42 {
		t.Fatalf("prompts %q: complete %v code %d, want the second prompt with status 42", prompts, got, f.pt.code)
	}
	if txt := f.shown(); txt != "startup\n$" || string(f.pt.line) != PromptText {
		t.Fatalf("shown %q, the tracker's line %q: want the markers stripped and PS1 re-asserted", txt, f.pt.line)
	}
	// PROMPT_COMMAND keeps PS1, itself and the nonce out of children's
	// environments (with the nonce a child could forge a prompt).
	for _, l := range strings.Split(env, "\n") {
		if strings.HasPrefix(l, "PROMPT_COMMAND=") || strings.HasPrefix(l, "PS1=") || strings.Contains(l, testNonce) {
			t.Errorf("exported to children: %q", l)
		}
	}
	// Another session's nonce does not accept these markers.
	if got := newFeeder("ffffffffffffffffffffffff").feed(prompts); got[0] {
		t.Fatal("a marker was accepted under another nonce")
	}
	if n1, n2 := newNonce(), newNonce(); n1 == n2 || len(n1) < 16 {
		t.Fatalf("nonces %q %q: want random and long", n1, n2)
	}
}

// bash prints job notices after PROMPT_COMMAND and before PS1: whole
// notice lines between the marker and the prompt keep the marker's
// evidence, however the stream is split. Nothing else may come between.
func TestPromptJobNoticeBeforePS1(t *testing.T) {
	stream := "false\r\n" + marker("1", testNonce) + "[1]+  Done                    true\r\n[12]-  Exit 3                  (exit 3)\r\n[3]   Terminated              sleep 9 && " + strings.Repeat("x", 100) + "\r\n" + PromptText
	for i := 1; i < len(stream); i++ {
		f := newFeeder(testNonce)
		if got := f.feed(stream[:i], stream[i:]); !got[1] || f.pt.code != 1 {
			t.Fatalf("split at %d (%q | %q): complete %v code %d, want the notices skipped and code 1", i, stream[:i], stream[i:], got, f.pt.code)
		}
	}
	f := newFeeder(testNonce)
	if got := f.feed(strings.Split(stream, "")...); !onlyLast(got) {
		t.Fatalf("byte by byte: %v", got)
	}
	for _, tail := range []string{
		"[1]+  Done  true\r\n$ x",    // text after the prompt
		"[1]+  Done  true $ ",        // the prompt's text ending a notice
		"[1]+  Done  true\r\n$ \r\n", // a newline after the prompt
		"$ not a prompt\r\n$ ",       // typed-ahead input after a prompt
		"hello\r\n$ ",                // output that is not a notice
		"\r\n$ ",                     // an empty line
		"$\r\n$ ",                    // a line that is a prefix of the prompt
		"[]+  Done\r\n$ ", "[1]x Done\r\n$ ", "[1]+Done\r\n$ ", "1]+  Done\r\n$ ",
	} {
		f := newFeeder(testNonce)
		if got := f.feed(marker("0", testNonce), tail); got[1] {
			t.Errorf("tail %q completed the prompt", tail)
		}
	}
}

// What the emulator hands the tracker after a marker ends lines as
// termtext did: LF, CR LF (even split, or with a sequence between them)
// and a lone CR followed by anything; NUL and BEL mean nothing; other
// controls are part of the line. However the stream is split.
func TestPromptLineEnds(t *testing.T) {
	const notice = "[1]+  Done  true"
	for _, tc := range []struct {
		tail string
		want bool
	}{
		{notice + "\r\n" + PromptText, true},
		{notice + "\n" + PromptText, true},
		{notice + "\r" + PromptText, true},
		{notice + "\r\x1b[K\n" + PromptText, true},
		{notice + "\r\x1b]0;title\x07" + PromptText, true},
		{"\x07" + PromptText + "\x00", true},
		{notice + "\r\n\r\n" + PromptText, false},
		{notice + "\r\r\n" + PromptText, false},
		{notice + "\r\x1b]0;title\x07\n" + PromptText, false},
		{PromptText + "\t", false},
		{PromptText + "\r", true}, // a CR waits for what follows it
		{PromptText + "\r$ ", false},
	} {
		stream := marker("0", testNonce) + tc.tail
		for i := 1; i < len(stream); i++ {
			f := newFeeder(testNonce)
			if got := f.feed(stream[:i], stream[i:]); got[1] != tc.want {
				t.Fatalf("tail %q split at %d: complete %v, want %v", tc.tail, i, got[1], tc.want)
			}
		}
	}
}
