package actors

import (
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

func TestMultiLine(t *testing.T) {
	for _, c := range []struct {
		text   string
		submit bool
		want   bool
	}{
		{"echo hi", true, false},
		{"echo hi", false, false},
		{"", true, false},
		{"\x03", false, false},
		{"ls\n", false, false},  // one line, submitted by its own newline
		{"ls\r", false, false},  // the same with a CR
		{"ls\n", true, true},    // then an empty line: a second prompt
		{"a\nb", true, true},    // two commands
		{"a\nb", false, true},   // one command, then typed text
		{"a\r\nb", false, true}, // CRLF counts as a line end
	} {
		if got := multiLine(messages.SendRequest{Text: c.text, Submit: c.submit}); got != c.want {
			t.Errorf("multiLine(%q, submit %v) = %v, want %v", c.text, c.submit, got, c.want)
		}
	}
}
