package local

import (
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
