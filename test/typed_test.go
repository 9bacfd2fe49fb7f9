//go:build linux

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A send of several lines is typed the way a person types it: each line
// goes to whichever program reads next. Here the later lines are ed's
// commands, written only once ed reads the terminal; the send returns at
// the shell's prompt with ed's exit code.
func TestTypedEdScript(t *testing.T) {
	requireProgram(t, "ed", "ed")
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.spawn(messages.SpawnRequest{Cwd: dir}).ID()
	res := h.prompt(id, "ed -s notes.txt\n$a\ntwo\nthree\n.\nw\nq", 0)
	if res.Unwritten != 0 {
		t.Fatalf("unwritten %d (%q)", res.Unwritten, res.FirstUnwritten)
	}
	got, err := os.ReadFile(notes)
	if err != nil || string(got) != "one\ntwo\nthree\n" {
		t.Fatalf("notes.txt %q %v, want ed's edit applied; viewport %q", got, err, res.Viewport)
	}
}

// Three input() questions answered in one send, and a here-document: each
// line reaches its reader as a line.
func TestTypedInputsAndHereDocument(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	res := h.prompt(id, `python3 -c 'a = input("a? "); b = input("b? "); c = input("c? "); print("got", a + b + c)'`+"\nx\ny\nz", 0)
	if !hasLine(res.Viewport, "got xyz") {
		t.Fatalf("viewport %q, want python's answer to all three questions", res.Viewport)
	}
	res = h.prompt(id, "cat <<'EOF'\nfirst line\n  second $HOME\nEOF", 0)
	if !hasLine(res.Viewport, "first line") || !hasLine(res.Viewport, "  second $HOME") {
		t.Fatalf("here-document viewport %q", res.Viewport)
	}
}

// A multi-line block typed into the python REPL: each line after the
// previous one's continuation prompt.
func TestTypedREPLBlock(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	if res := h.send(id, "python3 -q"); res.WaitReason != messages.WaitStdinRead || res.Reader != "python3" {
		t.Fatalf("python3 -q: %s reader %q", res.WaitReason, res.Reader)
	}
	res := h.send(id, "def f(x):\n    return x * 2\n\nprint(f(21))")
	if res.WaitReason != messages.WaitStdinRead || res.Reader != "python3" || !hasLine(res.Viewport, "42") {
		t.Fatalf("block: %s reader %q viewport %q", res.WaitReason, res.Reader, res.Viewport)
	}
	h.prompt(id, "exit()", 0)
}

// Under load (two CPU-burning processes beside), no typed line is lost,
// repeated or reordered.
func TestTypedLinesUnderLoad(t *testing.T) {
	for range 2 {
		burn := exec.Command("sh", "-c", "while :; do :; done")
		if err := burn.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = burn.Process.Kill(); _ = burn.Wait() })
	}
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	var in []string
	for i := range 40 {
		in = append(in, fmt.Sprintf("echo typed-%02d", i))
	}
	res := h.prompt(id, strings.Join(in, "\n"), 0)
	var out []string
	for _, l := range lines(res.Viewport) {
		if strings.HasPrefix(l, "typed-") {
			out = append(out, l)
		}
	}
	if len(out) != len(in) {
		t.Fatalf("%d outputs for %d lines: %q", len(out), len(in), res.Viewport)
	}
	for i, l := range out {
		if want := fmt.Sprintf("typed-%02d", i); l != want {
			t.Fatalf("output %d is %q, want %q (lost, repeated or reordered)", i, l, want)
		}
	}
}

// A send cancelled before its last line reports the lines it never wrote,
// and they are never written later.
func TestTypedCancelReportsUnwritten(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sh := h.spawn(messages.SpawnRequest{})
	id := sh.ID()
	op, err := h.svc.Session(h.owner, id).StartSend(testkit.Ctx(t), messages.SendRequest{Text: "sleep 30\necho never-typed\necho nor-this", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	foregroundSleep(t, sh.PID())
	if !op.Cancel() {
		t.Fatal("cancel refused before the send settled")
	}
	res, err := op.Result(testkit.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Unwritten != 2 || res.FirstUnwritten != "echo never-typed" {
		t.Fatalf("unwritten %d first %q, want 2 and the first untyped line", res.Unwritten, res.FirstUnwritten)
	}
	h.prompt(id, "echo after", 0)
	page, err := h.svc.Session(h.owner, id).Read(testkit.Ctx(t), messages.ReadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.Text, "never-typed") {
		t.Fatalf("an unwritten line reached the terminal: %q", page.Text)
	}
}

// Raw keeps the all-at-once write.
func TestRawWritesAllAtOnce(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	res, err := h.svc.Session(h.owner, id).Send(testkit.Ctx(t), messages.SendRequest{Text: "echo raw-1\necho raw-2", Submit: true, Raw: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead || !hasLine(res.Viewport, "raw-2") || res.ExitCode == nil {
		t.Fatalf("raw: %+v %v", res, err)
	}
}
