package takeover

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

// The hold's line editor gives the same lines and the same unsubmitted
// line however the keys are cut: all at once (Control.Type), one key per
// message (the live view sends each of xterm's keys as its own), or one
// byte at a time (a character or an escape sequence cut in two).
func TestLineEditorAnyChunks(t *testing.T) {
	cases := []struct {
		name    string
		keys    string
		lines   []string
		pending string
	}{
		{"plain", "echo half-typed-X", nil, "echo half-typed-X"},
		{"submitted", "ls -l\recho next", []string{"ls -l"}, "echo next"},
		{"erased to nothing", "echo abc\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", nil, ""},
		{"multi-byte", "echo é日本\x7f", nil, "echo é日"},
		{"arrow keys", "echo ab\x1b[D\x1bOC", nil, "echo ab"},
		{"pending escape", "echo pending\x1b", nil, `echo pending\x1b`},
		{"half an arrow key", "echo half\x1b[", nil, `echo half\x1b[`},
		{"meta Enter submits nothing", "echo meta\x1b\r", nil, "echo meta"},
		{"paste left open", "\x1b[200~echo pasted\rline two", nil, `\x1b[200~echo pasted` + "\r" + `line two`},
		{"paste closed", "\x1b[200~echo pasted\x1b[201~\r", []string{"echo pasted"}, ""},
		{"C-c ends a paste", "\x1b[200~echo pasted\x03echo again", nil, "echo again"},
		{"C-u, C-w", "one two\x17three\x15four", nil, "four"},
	}
	for _, tc := range cases {
		for _, chunk := range []int{0, 1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, chunk), func(t *testing.T) {
				var e lineEditor
				var lines []string
				feed := func(p string) {
					for _, l := range e.feed([]byte(p), false) {
						lines = append(lines, l.Text)
					}
				}
				switch chunk {
				case 0: // all at once
					feed(tc.keys)
				case 1: // one key (character) per message
					for _, r := range tc.keys {
						feed(string(r))
					}
				default: // every chunk bytes, cutting characters
					for b := []byte(tc.keys); len(b) > 0; {
						n := min(chunk, len(b))
						feed(string(b[:n]))
						b = b[n:]
					}
				}
				if !slices.Equal(lines, tc.lines) || e.pending() != tc.pending {
					t.Fatalf("lines %q pending %q; want %q, %q", lines, e.pending(), tc.lines, tc.pending)
				}
			})
		}
	}
}

// A character cut by the end of what was typed is named as its bytes.
func TestLineEditorCutCharacter(t *testing.T) {
	var e lineEditor
	e.feed([]byte("echo é日"[:len("echo é日")-1]), false)
	if got := e.pending(); got != `echo é\xe6\x97` {
		t.Fatalf("pending %q", got)
	}
	// At a secret prompt only the count is kept.
	var s lineEditor
	if l := s.feed([]byte("hunter2\r"), true); !slices.Equal(l, []messages.TypedLine{{Secret: true, Len: 7}}) {
		t.Fatalf("secret line %+v", l)
	}
}
