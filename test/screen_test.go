//go:build linux

package test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// vim under the capable terminal: its screen comes back with the result
// (kernel-exact readiness, no screen-stable timer), keys are pressed by
// name, :wq saves, and the shell's prompt returns with vim's exit code.
// vim's startup queries are answered, so the next command is not
// swallowed.
func TestVimEditsAFile(t *testing.T) {
	requireProgram(t, "vim", "vim")
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	dir := t.TempDir()
	sh := h.spawn(messages.SpawnRequest{Cwd: dir})
	ctx := testkit.Ctx(t)
	// ttimeoutlen: a lone Escape is Escape after 10 ms. Without it vim
	// waits (timeoutlen, 1 s) for the rest of a possible key code, and,
	// typed-ahead as here, redraws only after that wait: the kernel shows
	// it waiting all the same.
	res, err := sh.Send(ctx, messages.SendRequest{Text: "vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10' notes.txt", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead || res.Reader != "vim" || res.Screen == nil || !res.Screen.AltScreen {
		t.Fatalf("vim: %+v %v", res, err)
	}
	if !strings.Contains(strings.Join(res.Screen.Rows, "\n"), "notes.txt") {
		t.Fatalf("vim's screen shows no file name:\n%s", strings.Join(res.Screen.Rows, "\n"))
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "ihello from vim"}); err != nil {
		t.Fatal(err)
	}
	res, err = sh.Send(ctx, messages.SendRequest{Keys: []string{"Escape"}})
	if err != nil || res.Screen == nil || res.Screen.Rows[0] != "hello from vim" {
		t.Fatalf("insert: %+v %v", res.Screen, err)
	}
	// An arrow key by name, in vim's application cursor mode.
	if _, err := sh.Send(ctx, messages.SendRequest{Keys: []string{"Left", "Left"}}); err != nil {
		t.Fatal(err)
	}
	sc, err := sh.Screen(ctx)
	if err != nil || sc.CursorRow != 0 || sc.CursorCol != 11 {
		t.Fatalf("after two Left: cursor %d,%d %v, want 0,11", sc.CursorRow, sc.CursorCol, err)
	}
	res, err = sh.Send(ctx, messages.SendRequest{Text: ":wq", Submit: true})
	if err != nil || res.Cause != messages.CausePrompt || res.ExitCode == nil || *res.ExitCode != 0 || res.Screen != nil {
		t.Fatalf(":wq: %+v %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "hello from vim\n" {
		t.Fatalf("notes.txt %q %v", b, err)
	}
	// The next command runs: nothing was left waiting for an answer.
	h.prompt(sh.ID(), "echo after-vim", 0)

	// :q! in vim also returns to the shell at once.
	if res := h.send(sh.ID(), "vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10'"); res.Reader != "vim" {
		t.Fatalf("vim again: %+v", res)
	}
	h.prompt(sh.ID(), ":q!", 0)
	h.prompt(sh.ID(), "echo after-q", 0)
}

// Resize: the foreground program gets SIGWINCH, the screen follows, and a
// size out of range is refused.
func TestResize(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	if err := sh.Resize(ctx, 0, 10); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("resize 0x10: %v", err)
	}
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: `python3 -c 'import os, signal, time; signal.signal(signal.SIGWINCH, lambda *a: print("winch %d %d" % os.get_terminal_size()[::-1], flush=True)); print("ready", flush=True); time.sleep(60)'`, Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	testkit.WaitFor(t, 10*time.Second, "the trap", func() bool {
		d, _ := op.ReadOutput(ctx)
		seen.WriteString(d.Delta)
		return strings.Contains(seen.String(), "\nready")
	})
	if err := sh.Resize(ctx, 30, 100); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "SIGWINCH", func() bool {
		d, _ := op.ReadOutput(ctx)
		seen.WriteString(d.Delta)
		return strings.Contains(seen.String(), "winch 30 100")
	})
	if sc, err := sh.Screen(ctx); err != nil || sc.Height != 30 || sc.Width != 100 {
		t.Fatalf("screen after resize: %dx%d %v", sc.Height, sc.Width, err)
	}
	op.Cancel()
	_, _ = op.Result(ctx)
}

// Named keys that do not exist are a clear error, before anything is
// written.
func TestUnknownKey(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	_, err := sh.Send(testkit.Ctx(t), messages.SendRequest{Text: "echo x", Keys: []string{"Hyper"}})
	if !errors.Is(err, backend.ErrUnknownKey) || !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("unknown key: %v", err)
	}
	h.prompt(sh.ID(), "true", 0)
}

// A program that waits only briefly (vim after an Escape, waiting up to
// timeoutlen for the rest of a key code, and redrawing only after it) is
// looked at again when its own timeout ends: the result shows the screen
// after the redraw, never the one before.
func TestShortWaitIsNotReadiness(t *testing.T) {
	requireProgram(t, "vim", "vim")
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{Cwd: t.TempDir()})
	ctx := testkit.Ctx(t)
	if res := h.send(sh.ID(), "vim -u NONE -N -n"); res.Reader != "vim" {
		t.Fatalf("vim: %+v", res)
	}
	res, err := sh.Send(ctx, messages.SendRequest{Text: "ityped ahead", Keys: []string{"Escape"}})
	if err != nil || res.Screen == nil {
		t.Fatalf("escape: %+v %v", res, err)
	}
	rows := res.Screen.Rows
	if rows[0] != "typed ahead" || strings.Contains(rows[len(rows)-1], "INSERT") {
		t.Fatalf("the screen before vim's redraw:\n%s", strings.Join(rows, "\n"))
	}
	h.prompt(sh.ID(), ":q!", 0)
}

// Paste: text goes within bracketed-paste markers only when the caller
// asks and the program turned bracketed paste on; typed text never does.
func TestBracketedPaste(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	// The program turns bracketed paste on, then shows every byte it reads
	// (escaped) until a line ends.
	prog := `python3 -c 'import sys,tty; tty.setcbreak(0); sys.stdout.write("\x1b[?2004h>"); sys.stdout.flush(); b=b""
while not b.endswith(b"\r") and not b.endswith(b"\n"): b += sys.stdin.buffer.read(1)
print(repr(b))'`
	for _, c := range []struct {
		paste bool
		want  string
	}{
		{true, `b'\x1b[200~hi there\x1b[201~\n'`}, // cbreak keeps ICRNL: Enter reads as \n
		{false, `b'hi there\n'`},
	} {
		if res, err := sh.Send(ctx, messages.SendRequest{Text: prog, Submit: true, Raw: true}); err != nil || res.Reader != "python3" {
			t.Fatalf("program: %+v %v", res, err)
		}
		res, err := sh.Send(ctx, messages.SendRequest{Text: "hi there", Submit: true, Paste: c.paste})
		if err != nil || !strings.Contains(res.Viewport, c.want) {
			t.Fatalf("paste %v: %q %v, want %s", c.paste, res.Viewport, err, c.want)
		}
	}
}
