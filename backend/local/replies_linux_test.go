package local

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// guard bounds each step below that must not wedge; never a speed
// requirement.
const replyGuard = 30 * time.Second

// pending is how many bytes of answers wait for the program.
func (s *session) pending() int {
	s.replies.mu.Lock()
	defer s.replies.mu.Unlock()
	return len(s.replies.pending)
}

func (r *recorder) outputCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outputs
}

// within runs f and fails the test when it does not return within
// replyGuard.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(replyGuard):
		t.Fatalf("%s: still blocked after %s", what, replyGuard)
	}
}

// queryFlood starts a program that puts the terminal in raw mode and
// floods it with cursor-position queries, never reading its input, and
// returns the flood's epoch once the emulator has answered 200 reads of
// it: tens of MiB of queries, whose answers the terminal's input queue
// could not hold a thousandth of. check runs while it waits.
func queryFlood(t *testing.T, bs backend.Session, rec *recorder, check func()) uint64 {
	t.Helper()
	waitPrompt(t, rec, 0)
	bs.EndSend()
	flood := bs.BeginSend()
	if err := bs.Write(testkit.Ctx(t), []byte("stty raw -echo; yes $'\\e[6n'\r")); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "yes in the foreground", func() bool {
		pgid, err := bs.Foreground()
		if err != nil || pgid == bs.PID() {
			return false
		}
		st, err := linux.ReadStat(linux.FS{}, pgid)
		return err == nil && st.Comm == "yes"
	})
	start := rec.outputCount()
	testkit.WaitFor(t, 2*time.Minute, "200 reads of the flood", func() bool {
		check()
		return rec.outputCount()-start >= 200
	})
	return flood
}

// A program that floods the terminal with queries and never reads its
// input: the answers waiting for it stay within maxPendingReplies; the
// rest are lost, as on a real terminal.
func TestQueryFloodBounded(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	s := bs.(*session)
	peak := 0
	queryFlood(t, bs, rec, func() {
		n := s.pending()
		if n > maxPendingReplies {
			t.Fatalf("%d bytes of answers wait for a program that never reads (bound %d)", n, maxPendingReplies)
		}
		peak = max(peak, n)
	})
	t.Logf("peak of waiting answers: %d bytes", peak)
}

// The same flood, then SIGINT: writing to the terminal never waits behind
// the answer writer, the shell comes back with no stale answer in its
// input (the next command runs as typed), and the session closes.
func TestQueryFloodInterrupted(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	s := bs.(*session)
	flood := queryFlood(t, bs, rec, func() {})
	if _, err := bs.Signal(messages.SIGINT); err != nil {
		t.Fatalf("SIGINT: %v", err)
	}
	testkit.WaitFor(t, replyGuard, "the prompt after the flood", func() bool {
		_, ok := rec.prompt(flood)
		return ok
	})
	bs.EndSend()
	ep := bs.BeginSend()
	within(t, "TryWrite", func() {
		line := []byte("stty sane; echo o''k\r")
		n, err := s.TryWrite(line)
		if err == nil && n < len(line) {
			err = bs.Write(testkit.Ctx(t), line[n:])
		}
		if err != nil {
			t.Errorf("write: %v", err)
		}
	})
	testkit.WaitFor(t, replyGuard, "the prompt after echo ok", func() bool {
		_, ok := rec.prompt(ep)
		return ok
	})
	if f, _ := rec.prompt(ep); f.ExitCode != 0 {
		t.Fatalf("echo ok after the flood: exit %d, output %q", f.ExitCode, tail(bs.EndSend().Delta))
	}
	if out := bs.EndSend().Delta; !strings.HasSuffix("\n"+out, "\nok\n"+PromptText) {
		t.Fatalf("echo ok after the flood: output %q", tail(out))
	}
	within(t, "Close", func() {
		ctx, cancel := context.WithTimeout(context.Background(), replyGuard)
		defer cancel()
		if _, err := bs.Close(ctx, "test close"); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if n := s.pending(); n != 0 {
		t.Fatalf("%d bytes of answers wait after Close", n)
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}
