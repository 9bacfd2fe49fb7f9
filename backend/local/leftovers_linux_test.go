//go:build linux

package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"golang.org/x/sys/unix"
)

// BenchmarkLeftovers is the receipt's price on every prompt when a command
// left nothing running: one pread of the shell's children file. Compare it
// with the ~70 us of the raw echo floor (bench/): the echo bar allows 2 %.
func BenchmarkLeftovers(b *testing.B) {
	rec := &recorder{}
	bs := spawn(b, rec)
	waitPrompt(b, rec, 0)
	l := bs.(*session)
	for b.Loop() {
		if procs, _ := l.Leftovers(); len(procs) != 0 {
			b.Fatalf("an idle shell has children: %+v", procs)
		}
	}
}

// A receipt waits for a job the shell forked and that has not exec'd its
// program yet, and only for such a job: a subshell job runs the shell's
// program for good. The job here is held before its exec by a FIFO its
// redirection opens (bash restores the default handlers, then redirects,
// then execs), which is the window a loaded machine stretches.
func TestLeftoversWaitForAJobBeforeItsExec(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	waitPrompt(t, rec, 0)
	l := bs.(*session)
	fifo := filepath.Join(t.TempDir(), "gate")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ep := bs.BeginSend()
	line := "( sleep 201; true ) & sleep 202 < " + fifo + " &"
	if err := bs.Write(context.Background(), append([]byte(line), bs.Enter()...)); err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, rec, ep)

	var procs []messages.Process
	testkit.WaitFor(t, 10*time.Second, "the subshell and the held job", func() bool {
		var starting bool
		procs, starting = l.Leftovers()
		return len(procs) == 2 && starting
	})
	// The receipt waits while the job is held; the gate opens, the job
	// execs, and the receipt names it by its program.
	awaited := make(chan []messages.Process, 1)
	go func() { awaited <- l.AwaitLeftovers() }()
	gate, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	got := <-awaited
	var cmds []string
	for _, p := range got {
		cmds = append(cmds, p.Command)
	}
	slices.Sort(cmds)
	if !slices.Equal(cmds, []string{"bash", "sleep"}) {
		t.Fatalf("receipt %+v, want the subshell (bash) and the job by its program (sleep)", got)
	}
	// With the job exec'd, nothing is starting: the subshell is not
	// waited for.
	if _, starting := l.Leftovers(); starting {
		t.Fatalf("a subshell job counts as starting: %+v", got)
	}
}

// A job caught while bash restores its handlers one by one holds neither
// the shell's handlers nor the defaults: by its handlers it is a subshell.
// It runs and has no children yet, which a subshell waiting on its
// commands does not; so a child of the shell's program that runs with no
// children counts as starting. A subshell busy with builtins is exactly
// that from /proc, and stands in for the window here: the receipt waits
// for it, and only within the bound.
func TestLeftoversWaitForARunningChildlessShellChild(t *testing.T) {
	rec := &recorder{}
	bs := spawn(t, rec)
	waitPrompt(t, rec, 0)
	l := bs.(*session)
	ep := bs.BeginSend()
	if err := bs.Write(context.Background(), append([]byte("( while :; do :; done ) &"), bs.Enter()...)); err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, rec, ep)
	testkit.WaitFor(t, 10*time.Second, "the busy subshell counted as starting", func() bool {
		procs, starting := l.Leftovers()
		return len(procs) == 1 && procs[0].Command == "bash" && starting
	})
	start := time.Now()
	if got := l.AwaitLeftovers(); len(got) != 1 {
		t.Fatalf("receipt %+v, want the subshell", got)
	}
	if waited := time.Since(start); waited < leftoverExecWait {
		t.Fatalf("the receipt returned after %v, before its bound %v, with a starting child", waited, leftoverExecWait)
	}
}
