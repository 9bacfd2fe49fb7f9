package test

// Signals at the edges of a send and a close: a real SIGINT for a raw-mode
// program on cancel, SIGTSTP before close, and a bounded close of a
// TERM-ignoring child.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// rawProgram puts the terminal in raw mode (ISIG off: ^C is just a byte),
// reports that, and sleeps until a real SIGINT arrives; it then restores
// the terminal and exits 7. The report is printed inside the try block: the
// test interrupts as soon as it reads the line, so the handler must already
// be armed when the line is written.
const rawProgram = `import sys, termios, time, tty
fd = 0
saved = termios.tcgetattr(fd)
tty.setraw(fd)
try:
    print("ISIG-OFF" if not termios.tcgetattr(fd)[3] & termios.ISIG else "ISIG-ON", flush=True)
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    print("INTERRUPTED-BY-SIGINT", flush=True)
    sys.exit(7)
`

// Cancelling a send to a raw-mode program that disabled ISIG interrupts it
// with a real SIGINT (a written ^C would only queue a byte it never reads),
// the send settles, and the session stays usable.
func TestCancelInterruptsRawModeProgram(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 10000 // only the cancel may end this send
	cfg.TimeoutMs = 20000
	h := newHarness(t, cfg, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	script := filepath.Join(t.TempDir(), "raw.py")
	if err := os.WriteFile(script, []byte(rawProgram), 0o644); err != nil {
		t.Fatal(err)
	}

	cause := errors.New("caller cancelled the raw-mode program")
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	type sent struct {
		res messages.SendResult
		err error
	}
	done := make(chan sent, 1)
	go func() {
		res, err := sp.Send(ctx, messages.SendRequest{Text: "python3 " + script, Submit: true})
		done <- sent{res, err}
	}()
	testkit.WaitFor(t, 10*time.Second, "the program to report raw mode", func() bool {
		p, err := sp.Read(testkit.Ctx(t), messages.ReadRequest{})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if hasLine(p.Text, "ISIG-ON") {
			t.Fatalf("the program could not turn ISIG off: %q", p.Text)
		}
		return hasLine(p.Text, "ISIG-OFF")
	})
	// The whole line is out, its line feed too (print may write the text
	// and the newline in two writes; a SIGINT between them leaves no line
	// feed): the cursor stands below "ISIG-OFF", past its width.
	testkit.WaitFor(t, 10*time.Second, "the line feed after ISIG-OFF", func() bool {
		sc, err := sp.Screen(testkit.Ctx(t))
		if err != nil {
			t.Fatalf("Screen: %v", err)
		}
		return sc.CursorRow > 0 && strings.TrimRight(sc.Rows[sc.CursorRow-1], " ") == "ISIG-OFF" && sc.CursorCol == len("ISIG-OFF")
	})
	var py linux.Stat
	for _, s := range sessionMembers(t, sp.PID()) {
		if strings.HasPrefix(s.Comm, "python3") {
			py = s
		}
	}
	if py.PID == 0 {
		t.Fatalf("no python3 in the session:\n  %s", describe(sessionMembers(t, sp.PID())))
	}
	cancel(cause)

	var r sent
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled send did not settle")
	}
	if !errors.Is(r.err, cause) {
		t.Fatalf("Send returned %v, want the cancel cause", r.err)
	}
	if r.res.WaitReason != messages.WaitStdinRead || r.res.ExitCode == nil || *r.res.ExitCode != 7 {
		t.Fatalf("cancelled send settled as %q exit %s, want stdin_read exit 7; viewport %q", r.res.WaitReason, codeString(r.res.ExitCode), r.res.Viewport)
	}
	// In raw mode a newline moves down without returning to the first
	// column: the line reads as the terminal shows it, indented.
	if !strings.Contains(r.res.Viewport, "\n"+strings.Repeat(" ", len("ISIG-OFF"))+"INTERRUPTED-BY-SIGINT\n") {
		t.Fatalf("the program did not get SIGINT: viewport %q", r.res.Viewport)
	}
	if !gone(py.Identity()) {
		t.Fatalf("python3 %d still runs after the cancel", py.PID)
	}
	res := h.sendWhenFree(sp.ID(), "echo after-$((2+3))")
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 || !hasLine(res.Viewport, "after-5") {
		t.Fatalf("session unusable after the cancel: %+v", res)
	}
}

// SIGTSTP stops the foreground job (bash reports it and prompts again); a
// close still ends the stopped job.
func TestSIGTSTPThenClose(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	op, err := sp.StartSend(ctx, messages.SendRequest{Text: "sleep 300", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid := foregroundSleep(t, sp.PID())
	var job linux.Stat
	for _, s := range sessionMembers(t, sp.PID()) {
		if s.Comm == "sleep" && s.PGRP == pgid {
			job = s
		}
	}
	r, err := sp.Signal(ctx, messages.SIGTSTP)
	if err != nil || !r.Delivered || r.TargetPgid != pgid {
		t.Fatalf("SIGTSTP: %+v %v, want delivered to pgid %d", r, err, pgid)
	}
	res, err := op.Result(ctx)
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 128+int(syscall.SIGTSTP) {
		t.Fatalf("stopped send: %+v %v, want stdin_read exit %d", res, err, 128+int(syscall.SIGTSTP))
	}
	if !strings.Contains(res.Viewport, "Stopped") {
		t.Fatalf("bash did not report the stopped job: viewport %q", res.Viewport)
	}
	if s := stat(t, job.PID); s.State != 'T' || s.StartTime != job.StartTime {
		t.Fatalf("job %d state %c, want stopped (T)", job.PID, s.State)
	}

	report := h.killSession(sp.ID())
	if !slices.Contains(report.Killed, job.PID) {
		t.Errorf("report.Killed %v misses the stopped job %d", report.Killed, job.PID)
	}
	if !gone(job.Identity()) {
		t.Fatalf("the stopped job %d survived Kill: %+v", job.PID, stat(t, job.PID))
	}
}

// A child that ignores SIGTERM costs the close one grace period, then
// SIGKILL ends it: Kill returns promptly with no survivors.
func TestCloseTERMIgnoringChildIsBounded(t *testing.T) {
	cfg := testkit.PTYConfig()
	cfg.DisposeGraceMs = 300
	grace := messages.Ms(cfg.DisposeGraceMs)
	h := newHarness(t, cfg, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	h.prompt(sp.ID(), "(trap '' TERM; sleep 300) &", 0)
	var deaf linux.Stat
	testkit.WaitFor(t, 10*time.Second, "a sleep that ignores SIGTERM", func() bool {
		for _, s := range sessionMembers(t, sp.PID()) {
			if s.Comm == "sleep" && ignoresSignal(s.PID, syscall.SIGTERM) {
				deaf = s
				return true
			}
		}
		return false
	})

	start := time.Now()
	report := h.killSession(sp.ID())
	took := time.Since(start)
	t.Logf("Kill took %v with disposeGraceMs %d", took, cfg.DisposeGraceMs)
	if took < grace {
		t.Errorf("Kill took %v, less than the grace %v a TERM-ignoring child must be given", took, grace)
	}
	// A product promise, not a speed figure: a close is bounded by its
	// grace, then KILL and the quiescence check (which cannot take seconds).
	if took > grace+3*time.Second {
		t.Errorf("Kill took %v, want within a few seconds of the grace %v", took, grace)
	}
	if !slices.Contains(report.Killed, deaf.PID) || !gone(deaf.Identity()) {
		t.Fatalf("TERM-ignoring sleep %d: killed %v, gone %v", deaf.PID, report.Killed, gone(deaf.Identity()))
	}
}
