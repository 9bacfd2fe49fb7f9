package test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A cancel that lands while the shell starts the command must still stop
// it, not leave it running to the deadline. The SIGINT may reach the shell
// itself after it read the line (it goes on to run the command), or the
// forked child before it exec'd (bash's handler swallows it, also when the
// child is halfway through restoring the defaults and its handlers no
// longer match the shell's); and a line editor that drops a half-read line
// must not run the rest of it. The
// windows are short, so the cancel is tried many times, each as soon as
// the command line's echo shows. Found by TestSoak.
//
// CI runs 10 tries; PTYACTOR_CANCEL_TRIES=1000 is the stress form.
func TestCancelWhileCommandStarts(t *testing.T) {
	tries := 10
	if n, err := strconv.Atoi(os.Getenv("PTYACTOR_CANCEL_TRIES")); err == nil && n > 0 {
		tries = n
	}
	cfg := testkit.PTYConfig()
	cfg.TimeoutMs = 5000
	h := newHarness(t, cfg, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	id := sp.ID()
	for i := range tries {
		// Each try's own watchdog: the stress form's thousand tries
		// together outlast one (testkit.Timeout) on a loaded machine.
		ctx := testkit.Ctx(t)
		op, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "yes window", Submit: true})
		if err != nil {
			t.Fatalf("try %d: StartSend: %v", i, err)
		}
		testkit.WaitFor(t, 10*time.Second, "the command line's echo", func() bool {
			rd, err := op.ReadOutput(ctx)
			return err == nil && strings.Contains(rd.Delta, "window")
		})
		if !op.Cancel() {
			t.Fatalf("try %d: Cancel refused", i)
		}
		// Settled on the shell's prompt: after the interrupted command
		// (130), or with no exit code when the SIGINT reached bash's line
		// editor first and the line was discarded, never run. One case
		// is outside the terminal's reach: readline gathers typeahead
		// into its own buffer while inserting a character, and a SIGINT
		// then discards only the line so far; the rest of the buffer
		// runs as a command ("y" dropped, "es window" not found). The
		// kernel's input queue was flushed; readline's buffer cannot be.
		res, err := op.Result(ctx)
		tail := readlineTail(res, "yes window")
		if tail {
			t.Logf("try %d: readline ran its buffered tail after the interrupt: %q", i, res.Viewport)
		}
		if err != nil || res.WaitReason != messages.WaitStdinRead || (res.ExitCode != nil && *res.ExitCode != 130 && !tail) {
			t.Fatalf("try %d: cancelled send settled as %q exit %s (%v) after %s, want stdin_read at the shell's prompt; viewport %q", i, res.WaitReason, codeString(res.ExitCode), err, res.Elapsed, res.Viewport)
		}
		for _, p := range sessionMembers(t, sp.PID()) {
			if p.Comm == "yes" && p.State != 'Z' {
				t.Fatalf("try %d: the cancelled yes (pid %d) still runs", i, p.PID)
			}
		}
		h.sendWhenFree(id, "true")
	}
}
