package local

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// recorder is a backend.Events that keeps every fact.
type recorder struct {
	mu      sync.Mutex
	outputs int
	prompts []backend.PromptFact
	exits   []messages.SessionStatus
	// promptWake is closed at the next prompt fact (promptCame).
	promptWake chan struct{}
}

func (r *recorder) Output(uint64) { r.mu.Lock(); r.outputs++; r.mu.Unlock() }
func (r *recorder) Prompt(f backend.PromptFact) {
	r.mu.Lock()
	r.prompts = append(r.prompts, f)
	if r.promptWake != nil {
		close(r.promptWake)
		r.promptWake = nil
	}
	r.mu.Unlock()
}

// promptCame returns a channel closed at the next prompt fact.
func (r *recorder) promptCame() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.promptWake == nil {
		r.promptWake = make(chan struct{})
	}
	return r.promptWake
}
func (r *recorder) Exited(st messages.SessionStatus) {
	r.mu.Lock()
	r.exits = append(r.exits, st)
	r.mu.Unlock()
}

// prompt returns the first prompt fact of epoch, if any.
func (r *recorder) prompt(epoch uint64) (backend.PromptFact, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.prompts {
		if f.Epoch == epoch {
			return f, true
		}
	}
	return backend.PromptFact{}, false
}

func (r *recorder) exitCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.exits)
}

// spawn starts a real bash through the backend and closes it when the test
// ends.
func spawn(t testing.TB, rec *recorder) backend.Session {
	t.Helper()
	bs, err := New(Options{}).Spawn(testkit.Ctx(t), messages.SpawnSpec{SessionID: "pty-local-test"}, testkit.PTYConfig(), rec)
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	trackShell(bs.PID())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := bs.Close(ctx, "test ended"); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return bs
}

func waitPrompt(t testing.TB, rec *recorder, epoch uint64) backend.PromptFact {
	t.Helper()
	var f backend.PromptFact
	testkit.WaitFor(t, 10*time.Second, "the prompt marker", func() bool {
		var ok bool
		f, ok = rec.prompt(epoch)
		return ok
	})
	return f
}

// The backend contract over a real bash in a real PTY: facts per epoch,
// exit status in the marker, foreground, signals, reads, close.
func TestSessionFactsOverRealPTY(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	shell := bs.PID()

	f := waitPrompt(t, rec, 0)
	if f.ExitCode != 0 || !f.ShellForeground {
		t.Fatalf("startup prompt %+v", f)
	}
	if out := bs.EndSend(); !strings.HasSuffix(out.Delta, PromptText) || strings.ContainsAny(out.Delta, "\x1b\x07\r") {
		t.Fatalf("startup output %q", out.Delta)
	}

	ep := bs.BeginSend()
	if ep == 0 {
		t.Fatal("BeginSend returned the startup epoch")
	}
	if _, ok := bs.PromptReady(); ok {
		t.Fatal("prompt evidence from before BeginSend survived it")
	}
	ctx := context.Background()
	if err := bs.Write(ctx, append([]byte("(exit 5)"), bs.Enter()...)); err != nil {
		t.Fatal(err)
	}
	f = waitPrompt(t, rec, ep)
	if f.ExitCode != 5 || !f.ShellForeground {
		t.Fatalf("prompt after (exit 5): %+v", f)
	}
	if code, ok := bs.PromptReady(); !ok || code != 5 {
		t.Fatalf("PromptReady %d %v", code, ok)
	}
	// TakeOutput hands out the lines above the cursor's, once; EndSend
	// the rest, the prompt the cursor is on.
	if out := bs.TakeOutput(); out.Delta != "(exit 5)\n" {
		t.Fatalf("send output %q", out.Delta)
	}
	if again := bs.TakeOutput(); again.Delta != "" {
		t.Fatalf("TakeOutput returned %q twice", again.Delta)
	}
	if out := bs.EndSend(); out.Delta != PromptText {
		t.Fatalf("the rest of the send's output %q", out.Delta)
	}

	if pgid, err := bs.Foreground(); err != nil || pgid != shell {
		t.Fatalf("Foreground %d %v, want the shell %d", pgid, err, shell)
	}
	if _, err := bs.Signal(messages.SIGKILL); !errors.Is(err, messages.ErrRefuseKillShell) {
		t.Fatalf("SIGKILL to the shell: %v", err)
	}
	if _, err := bs.Signal(messages.Signal("SIGFOO")); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("SIGFOO: %v", err)
	}
	page, err := bs.Read(0, messages.DefaultReadCount)
	if err != nil || !strings.HasSuffix(page.Text, "(exit 5)\n"+PromptText) {
		t.Fatalf("Read %+v %v", page, err)
	}

	// A job in its own group, found and signalled through the foreground.
	ep = bs.BeginSend()
	if err := bs.Write(ctx, append([]byte("sleep 30"), bs.Enter()...)); err != nil {
		t.Fatal(err)
	}
	pgid := foregroundSleep(t, bs)
	r, err := bs.Signal(messages.SIGINT)
	if err != nil || !r.Delivered || r.TargetPgid != pgid {
		t.Fatalf("SIGINT %+v %v, want pgid %d", r, err, pgid)
	}
	if f := waitPrompt(t, rec, ep); f.ExitCode != 130 {
		t.Fatalf("prompt after SIGINT %+v", f)
	}
	bs.EndSend()

	// Close: the shell is stopped, reported, and the exit reported once.
	rep, err := bs.Close(ctx, "test close")
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !slices.Contains(rep.Killed, shell) || len(rep.Survivors) != 0 || !rep.Status.Exited {
		t.Fatalf("report %+v", rep)
	}
	if st := bs.Status(); !st.Exited {
		t.Fatalf("status %s after Close", st)
	}
	if rep2, err := bs.Close(ctx, "again"); err != nil || !slices.Equal(rep2.Killed, rep.Killed) {
		t.Fatalf("second Close %+v %v, want the first report", rep2, err)
	}
	testkit.WaitFor(t, 5*time.Second, "the exit fact", func() bool { return rec.exitCount() >= 1 })
	if n := rec.exitCount(); n != 1 {
		t.Fatalf("Exited reported %d times", n)
	}
	if _, err := linux.ReadStat(linux.FS{}, shell); !errors.Is(err, linux.ErrNotFound) {
		t.Fatalf("shell %d still in the process table: %v", shell, err)
	}
	if err := bs.Write(ctx, []byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// A write whose context ends around it must not leave the terminal
// unwritable: the next write, with a live context, succeeds. (The input
// goes to bash's line editor at an idle prompt, which keeps reading it.)
func TestWriteCancelLeavesTerminalWritable(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	waitPrompt(t, rec, 0)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 2000; i++ {
		_ = bs.Write(cancelled, []byte{' '})
		if err := bs.Write(context.Background(), []byte{' '}); err != nil {
			t.Fatalf("round %d: a write with a live context failed after one with a cancelled context: %v", i, err)
		}
	}
	// The terminal still works end to end.
	ep := bs.BeginSend()
	if err := bs.Write(context.Background(), append([]byte("\x15(exit 9)"), bs.Enter()...)); err != nil {
		t.Fatal(err)
	}
	if f := waitPrompt(t, rec, ep); f.ExitCode != 9 {
		t.Fatalf("prompt %+v", f)
	}
}

// foregroundSleep waits until the terminal's foreground group is a sleep
// that has really exec'd: between fork and exec the child is still a bash
// whose handler would swallow a SIGINT.
func foregroundSleep(t *testing.T, bs backend.Session) int {
	t.Helper()
	var pgid int
	testkit.WaitFor(t, 10*time.Second, "sleep in the foreground", func() bool {
		var err error
		pgid, err = bs.Foreground()
		if err != nil || pgid == bs.PID() {
			return false
		}
		st, err := linux.ReadStat(linux.FS{}, pgid)
		return err == nil && st.Comm == "sleep"
	})
	return pgid
}
