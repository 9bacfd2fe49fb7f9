//go:build linux

package test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// The transcript reads as a terminal shows it (issue 15, item 2): a send's
// viewport holds its command line, then the lines its output left on the
// terminal, then the prompt. Carriage returns and backspaces overwrite,
// erases and cursor moves apply, wrapped lines are one line.
func TestTranscriptGolden(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	cases := []struct {
		name, cmd string
		want      []string // the output lines between the command and the prompt
	}{
		{"carriage return overwrites", `printf 'progress 20%%\rprogress 40%%\rprogress 100%%\n'`, []string{"progress 100%"}},
		{"overstrike", `printf 'N\bNA\bAM\bME\bE\n'`, []string{"NAME"}},
		{"backspace moves back", `printf 'abc\bX\n'`, []string{"abX"}},
		{"erase in line", `printf 'hello world\r\033[Kbye\n'`, []string{"bye"}},
		{"erase after a move back", `printf 'abcdef\033[3D\033[K!\n'`, []string{"abc!"}},
		{"multi-line progress redrawn with cursor up",
			`for s in 10 50 100; do [ $s = 10 ] || printf '\033[3A'; for i in 1 2 3; do printf '\r\033[Kitem %d: %d%%\n' $i $s; done; done`,
			[]string{"item 1: 100%", "item 2: 100%", "item 3: 100%"}},
		{"colours are dropped", `printf '\033[1;31mred\033[0m plain\n'`, []string{"red plain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := h.prompt(id, tc.cmd, 0)
			want := tc.cmd + "\n" + strings.Join(tc.want, "\n") + "\n" + local.PromptText
			if res.Viewport != want {
				t.Fatalf("viewport\n got %q\nwant %q", res.Viewport, want)
			}
		})
	}

	// A command line of 5,000 characters wraps over many rows and comes
	// back as one line, as does its output: no line editor's scrolling.
	long := strings.Repeat("0123456789", 500)
	res := h.prompt(id, "echo "+long, 0)
	if want := "echo " + long + "\n" + long + "\n" + local.PromptText; res.Viewport != want {
		t.Fatalf("long line: viewport of %d bytes, %d lines; want 2 lines and the prompt: %.300q",
			len(res.Viewport), strings.Count(res.Viewport, "\n"), res.Viewport)
	}
	page, err := h.svc.Session(h.owner, id).Read(testkit.Ctx(t), messages.ReadRequest{Offset: intp(1), Count: intp(1)})
	if err != nil || page.Text != long {
		t.Fatalf("the long output line in scrollback: %.100q %v", page.Text, err)
	}
}

// man's overstrike (bold as N\bN, underline as _\bx) reads as plain text.
func TestTranscriptManPage(t *testing.T) {
	requireProgram(t, "man", "man-db")
	if err := exec.Command("man", "-w", "ls").Run(); err != nil {
		t.Skipf("no manual page for ls on this machine (man -w ls: %v)", err)
	}
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	id := h.spawn(messages.SpawnRequest{}).ID()
	res := h.prompt(id, "MANPAGER=cat man ls | head -20", 0)
	if strings.ContainsAny(res.Viewport, "\b\x1b\r") || !hasLine(res.Viewport, "NAME") ||
		!strings.Contains(res.Viewport, "ls - list directory contents") {
		t.Fatalf("man ls: viewport %q, want plain text", res.Viewport)
	}
}
