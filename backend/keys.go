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
		if len(rest) == 1 {
			c := rest[0]
			switch {
			case c >= 'a' && c <= 'z':
				return []byte{c - 'a' + 1}, nil
			case c == '@' || c == ' ':
				return []byte{0}, nil
			case c >= '[' && c <= '_':
				return []byte{c - '@'}, nil
			case c == '?':
				return []byte{0x7f}, nil
			}
		}
		return nil, unknownKey(name)
	}
	cursor := func(final byte) []byte {
		if appCursor {
			return []byte{0x1b, 'O', final}
		}
		return []byte{0x1b, '[', final}
	}
	switch n {
	case "enter", "return":
		return []byte{'\r'}, nil
	case "tab":
		return []byte{'\t'}, nil
	case "backtab", "shift-tab":
		return []byte("\x1b[Z"), nil
	case "escape", "esc":
		return []byte{0x1b}, nil
	case "backspace", "bs":
		return []byte{0x7f}, nil
	case "space":
		return []byte{' '}, nil
	case "delete", "del":
		return []byte("\x1b[3~"), nil
	case "insert", "ins":
		return []byte("\x1b[2~"), nil
	case "up":
		return cursor('A'), nil
	case "down":
		return cursor('B'), nil
	case "right":
		return cursor('C'), nil
	case "left":
		return cursor('D'), nil
	case "home":
		return cursor('H'), nil
	case "end":
		return cursor('F'), nil
	case "pageup", "pgup":
		return []byte("\x1b[5~"), nil
	case "pagedown", "pgdn":
		return []byte("\x1b[6~"), nil
	}
	if fn, ok := strings.CutPrefix(n, "f"); ok {
		codes := map[string]string{
			"1": "\x1bOP", "2": "\x1bOQ", "3": "\x1bOR", "4": "\x1bOS",
			"5": "\x1b[15~", "6": "\x1b[17~", "7": "\x1b[18~", "8": "\x1b[19~",
			"9": "\x1b[20~", "10": "\x1b[21~", "11": "\x1b[23~", "12": "\x1b[24~",
		}
		if c, ok := codes[fn]; ok {
			return []byte(c), nil
		}
	}
	if len([]rune(name)) == 1 {
		return []byte(name), nil // a single character is itself
	}
	return nil, unknownKey(name)
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
