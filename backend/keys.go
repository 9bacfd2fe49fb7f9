package backend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ptyactor/ptyactor/messages"
)

// ErrUnknownKey is the error of a key name EncodeKey does not know; it
// wraps messages.ErrInvalidArgument too (see EncodeKey).
var ErrUnknownKey = errors.New("unknown key")

// KeyNames lists the named keys EncodeKey accepts besides Ctrl-<letter>,
// Alt-<key> and F1–F12, for error messages and schemas.
var KeyNames = []string{"Enter", "Tab", "Escape", "Backspace", "Delete", "Up", "Down", "Left", "Right",
	"Home", "End", "PageUp", "PageDown", "Insert", "Space"}

// plainKeys are the named keys whose bytes do not depend on the
// terminal's modes, by every lower-case name EncodeKey accepts for them.
var plainKeys = map[string]string{
	"enter": "\r", "return": "\r",
	"tab":     "\t",
	"backtab": "\x1b[Z", "shift-tab": "\x1b[Z",
	"escape": "\x1b", "esc": "\x1b",
	"backspace": "\x7f", "bs": "\x7f",
	"space":  " ",
	"delete": "\x1b[3~", "del": "\x1b[3~",
	"insert": "\x1b[2~", "ins": "\x1b[2~",
	"pageup": "\x1b[5~", "pgup": "\x1b[5~",
	"pagedown": "\x1b[6~", "pgdn": "\x1b[6~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// cursorKeys are the keys that follow application cursor mode (DECCKM):
// each is ESC [ final normally and ESC O final when the program asked.
var cursorKeys = map[string]byte{
	"up": 'A', "down": 'B', "right": 'C', "left": 'D', "home": 'H', "end": 'F',
}

// EncodeKey returns the bytes an xterm-compatible terminal sends for a
// named key, for any backend whose sessions are such terminals (appCursor:
// the program turned on application cursor keys, DECCKM): the arrows honour application cursor mode (DECCKM, ESC O A rather
// than ESC [ A), Home and End too; Backspace is DEL; Ctrl-<letter> is the
// control character; Alt-<key> prefixes ESC. Names are case-insensitive.
func EncodeKey(name string, appCursor bool) ([]byte, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if rest, ok := cutAny(n, "alt-", "alt+", "m-", "meta-"); ok {
		k, err := EncodeKey(rest, appCursor)
		if err != nil || len(rest) == 0 {
			return nil, unknownKey(name)
		}
		return append([]byte{0x1b}, k...), nil
	}
	if rest, ok := cutAny(n, "ctrl-", "ctrl+", "c-", "control-"); ok {
		if c, ok := controlKey(rest); ok {
			return []byte{c}, nil
		}
		return nil, unknownKey(name)
	}
	if k, ok := plainKeys[n]; ok {
		return []byte(k), nil
	}
	if final, ok := cursorKeys[n]; ok {
		if appCursor {
			return []byte{0x1b, 'O', final}, nil
		}
		return []byte{0x1b, '[', final}, nil
	}
	if len([]rune(name)) == 1 {
		return []byte(name), nil // a single character is itself
	}
	return nil, unknownKey(name)
}

// controlKey is the control character Ctrl-<rest> types, as xterm sends
// it: a letter is its place in the alphabet, @ and space are NUL, [ to _
// are ESC to US, and ? is DEL.
func controlKey(rest string) (byte, bool) {
	if len(rest) != 1 {
		return 0, false
	}
	c := rest[0]
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 1, true
	case c == '@' || c == ' ':
		return 0, true
	case c >= '[' && c <= '_':
		return c - '@', true
	case c == '?':
		return 0x7f, true
	}
	return 0, false
}

func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if r, ok := strings.CutPrefix(s, p); ok {
			return r, true
		}
	}
	return s, false
}

func unknownKey(name string) error {
	return fmt.Errorf("%w %q (named keys: %s, F1-F12, Ctrl-<letter>, Alt-<key>, or one character): %w",
		ErrUnknownKey, name, strings.Join(KeyNames, ", "), messages.ErrInvalidArgument)
}
