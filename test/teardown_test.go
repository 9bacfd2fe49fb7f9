package test

import (
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Item 15: closing a session stops the shell and every job it started,
// including one that ignores SIGTERM.
func TestKillLeavesNothing(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	shell := stat(t, sp.PID()).Identity()
	h.prompt(sp.ID(), "sleep 300 &", 0)
	h.prompt(sp.ID(), "(trap '' TERM; sleep 300) &", 0)

	var members []linux.Stat
	testkit.WaitFor(t, 10*time.Second, "two background sleeps, one ignoring SIGTERM", func() bool {
		members = sessionMembers(t, sp.PID())
		sleeps, deaf := 0, 0
		for _, p := range members {
			if p.Comm == "sleep" {
				sleeps++
				if ignoresSignal(p.PID, syscall.SIGTERM) {
					deaf++
				}
			}
		}
		return sleeps == 2 && deaf == 1
	})

	report, err := sp.Close(testkit.Ctx(t), "")
	closed := !report.Joined
	if err != nil || !closed {
		t.Fatalf("Kill: closed=%v err=%v", closed, err)
	}
	if len(report.Killed) == 0 || len(report.Survivors) != 0 {
		t.Fatalf("report %+v: want killed pids and no survivors", report)
	}
	for _, p := range members {
		if p.PID != sp.PID() && !slices.Contains(report.Killed, p.PID) {
			t.Errorf("report.Killed %v misses pid %d (%s)", report.Killed, p.PID, p.Comm)
		}
		if !gone(p.Identity()) {
			t.Errorf("pid %d (%s) survived Kill", p.PID, p.Comm)
		}
	}
	if s := sessionMembers(t, sp.PID()); len(s) != 0 {
		t.Fatalf("the shell's session still has members:\n  %s", describe(s))
	}
	if !gone(shell) {
		t.Fatalf("the shell %d survived Kill", sp.PID())
	}
	if !report.Status.Exited {
		t.Fatalf("report status %s, want exited", report.Status)
	}
	h.waitListEmpty("after Kill")
	// Kill of a closed session is NO_SESSION, not a second close.
	if _, err := sp.Close(testkit.Ctx(t), ""); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("second Kill: %v, want NO_SESSION", err)
	}
}
