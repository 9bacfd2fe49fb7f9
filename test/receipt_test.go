//go:build linux

package test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A command that returns to the prompt but leaves processes running says
// so: background jobs, nohup and disown, with whether they are detached
// (will outlive the shell's hangup).
func TestReceiptListsLeftRunning(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	if res := h.prompt(id, "true", 0); len(res.Running) != 0 {
		t.Fatalf("nothing left: %+v", res.Running)
	}
	res := h.prompt(id, "sleep 101 &", 0)
	if len(res.Running) != 1 || res.Running[0].Command != "sleep" || res.Running[0].Detached {
		t.Fatalf("background job: %+v", res.Running)
	}
	res = h.prompt(id, "nohup sleep 102 >/dev/null 2>&1 &", 0)
	detached := 0
	for _, p := range res.Running {
		if p.Detached {
			detached++
		}
	}
	if len(res.Running) != 2 || detached != 1 {
		t.Fatalf("after nohup: %+v", res.Running)
	}
	res = h.prompt(id, "sleep 103 & disown", 0)
	if len(res.Running) != 3 {
		t.Fatalf("after disown: %+v", res.Running)
	}
	// Kill exactly the listed jobs (a pattern would reach other tests'
	// processes on this machine).
	var pids []string
	for _, p := range res.Running {
		pids = append(pids, strconv.Itoa(p.PID))
	}
	h.prompt(id, "kill "+strings.Join(pids, " ")+"; wait 2>/dev/null; true", 0)
	testkit.WaitFor(t, 5e9, "the jobs to end", func() bool {
		return len(h.prompt(id, "true", 0).Running) == 0
	})
}

// Under the subreaper, a job that left the shell's children (setsid forks
// away; the host adopts it) is listed too, detached, by its session tag.
func TestReceiptListsSetsidUnderSubreaper(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{Subreaper: true})
	id := h.spawn(messages.SpawnRequest{}).ID()
	h.prompt(id, "setsid sleep 104 &", 0)
	testkit.WaitFor(t, 5e9, "the setsid job listed", func() bool {
		for _, p := range h.prompt(id, "true", 0).Running {
			if p.Command == "sleep" && p.Detached {
				return true
			}
		}
		return false
	})
}
