package backend

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

func TestEncodeKey(t *testing.T) {
	for _, c := range []struct {
		name      string
		appCursor bool
		want      string
	}{
		{"Enter", false, "\r"}, {"tab", false, "\t"}, {"Escape", false, "\x1b"}, {"Backspace", false, "\x7f"},
		{"Delete", false, "\x1b[3~"}, {"Up", false, "\x1b[A"}, {"Up", true, "\x1bOA"}, {"left", true, "\x1bOD"},
		{"Home", false, "\x1b[H"}, {"End", true, "\x1bOF"}, {"PageUp", false, "\x1b[5~"}, {"PageDown", false, "\x1b[6~"},
		{"F1", false, "\x1bOP"}, {"F5", false, "\x1b[15~"}, {"F12", false, "\x1b[24~"},
		{"Ctrl-C", false, "\x03"}, {"ctrl-a", false, "\x01"}, {"Ctrl-[", false, "\x1b"},
		{"Alt-x", false, "\x1bx"}, {"Alt-Left", true, "\x1b\x1bOD"}, {"q", false, "q"}, {":", false, ":"},
	} {
		got, err := EncodeKey(c.name, c.appCursor)
		if err != nil || string(got) != c.want {
			t.Errorf("EncodeKey(%q, %v) = %q, %v; want %q", c.name, c.appCursor, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "Ctrl-", "Ctrl-ab", "F13", "Hyper", "Alt-", "ab"} {
		if _, err := EncodeKey(bad, false); !errors.Is(err, ErrUnknownKey) || !errors.Is(err, messages.ErrInvalidArgument) {
			t.Errorf("EncodeKey(%q): %v, want ErrUnknownKey and ErrInvalidArgument", bad, err)
		}
	}
}
