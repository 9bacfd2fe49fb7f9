package local

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
	"golang.org/x/sys/unix"
)

// A shell that has not been proven waiting (here: stopped, as one still
// busy taking the foreign input) gets no erasure yet: the clear reports
// busy with what it took, and a retry once the shell waits again returns
// the editor's line and the keys that empty it. Erasure keys sent while
// the shell is still reading would land before bytes it holds unechoed,
// and the send's line would run behind them (a stress-run flake).
func TestClearForeignInputWaitsForTheShell(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	s := bs.(*session)
	waitPrompt(t, rec, 0)
	// Foreign input: written to the master by nobody's send.
	if err := control(s.master, func(fd int) error {
		_, err := unix.Write(fd, []byte("typed-ahead"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "the line editor's echo", func() bool {
		s.mu.Lock()
		typed, _, ok := s.prompt.editorLine()
		s.mu.Unlock()
		return ok && typed == "typed-ahead"
	})
	if err := syscall.Kill(s.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(s.PID(), syscall.SIGCONT) }
	defer cont()
	testkit.WaitFor(t, 10*time.Second, "the shell stopped", func() bool {
		st, err := linux.ReadStat(linux.FS{}, s.PID())
		return err == nil && st.State == 'T'
	})
	foreign, keys, busy := s.ClearForeignInput(false)
	if !busy || keys != nil || foreign != "" {
		t.Fatalf("stopped shell: foreign %q keys %q busy %v; want busy, nothing yet", foreign, keys, busy)
	}
	cont()
	testkit.WaitFor(t, 10*time.Second, "the clear once the shell waits", func() bool {
		foreign, keys, busy = s.ClearForeignInput(true)
		return !busy
	})
	if foreign != "typed-ahead" || string(keys) != string(clearLine) {
		t.Fatalf("after the shell waits: foreign %q keys %q; want the line and its erasure", foreign, keys)
	}
}

// The clear's keys empty readline's line from whatever state a person's
// keys (or a terminal's answers) left it in, checked against the real
// bash: the command written after them runs exactly as written. The old
// keys (C-a C-k) lost to an ESC pending (ESC C-a is M-C-a: the rest of
// the line stays), half an arrow key, a bracketed paste left open (every
// key is text in it, the command too) and a quoted insert.
func TestClearLineFromAnyState(t *testing.T) {
	states := map[string]string{
		"empty":                   "",
		"plain":                   "echo abc",
		"multi-byte":              "echo é日本",
		"half a character":        "echo é日"[:len("echo é日")-1],
		"ESC pending":             "echo abc\x1b",
		"half an arrow key":       "echo abc\x1b[",
		"half a CSI with params":  "echo abc\x1b[1;",
		"half an SS3 key":         "echo abc\x1bO",
		"ESC ESC":                 "echo abc\x1b\x1b",
		"bracketed paste open":    "\x1b[200~echo abc",
		"paste with half its end": "\x1b[200~echo abc\x1b[20",
		"incremental search":      "echo first\r\x12ech",
		"quoted insert pending":   "echo abc\x16",
		"numeric argument":        "echo abc\x1b5",
		"C-x prefix":              "echo abc\x18",
		"erased to nothing":       "echo abc" + strings.Repeat("\x7f", 8),
	}
	for name, state := range states {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			bs := spawn(t, rec)
			s := bs.(*session)
			waitPrompt(t, rec, 0)
			ctx := testkit.Ctx(t)
			if _, err := s.WriteAs(ctx, "human:test", []byte(state)); err != nil {
				t.Fatal(err)
			}
			// The shell took the keys (none wait in the queue) and waits
			// again with its echo parsed.
			testkit.WaitFor(t, 10*time.Second, "the shell waiting with the keys read", func() bool {
				obs, err := s.ProbeStdin()
				return err == nil && obs.Shell && obs.Waiting && obs.InputConsumed && obs.Drained
			})
			// A person's input was the last: the clear is written once
			// the shell is proven waiting, whatever its line shows.
			var keys []byte
			testkit.WaitFor(t, 10*time.Second, "the clear once the shell waits", func() bool {
				_, k, busy := s.ClearForeignInput(true)
				keys = k
				return !busy && k != nil
			})
			if string(keys) != string(clearLine) {
				t.Fatalf("keys %q", keys)
			}
			epoch := s.BeginSend()
			if err := s.Write(ctx, append(keys, "echo ok-$((6*7))\r"...)); err != nil {
				t.Fatal(err)
			}
			f := waitPrompt(t, rec, epoch)
			rd, err := s.ReadSince(0)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(rd.Text, "\n")
			var command string
			for _, l := range lines {
				if strings.Contains(l, "echo ok-") {
					command = l
				}
			}
			if command != "$ echo ok-$((6*7))" || !slices.Contains(lines, "ok-42") || f.ExitCode != 0 {
				t.Fatalf("the command did not run as written (exit %d):\n%s", f.ExitCode, rd.Text)
			}
			if s.personInput.Load() {
				t.Fatal("the agent's write left the person's input last")
			}
		})
	}
}
