package record

import (
	"strings"
	"unicode/utf8"
)

// utf8Carry joins a character that a read split across two output
// events: the tail of an event that starts a character without ending it
// waits for the next event. A byte that is not UTF-8 anywhere else
// becomes U+FFFD, as a terminal shows it.
type utf8Carry struct {
	b []byte
}

// take returns the valid text of the carry and s, keeping a trailing
// incomplete character (at most 3 bytes) for the next call.
func (c *utf8Carry) take(s string) string {
	if len(c.b) == 0 && utf8.ValidString(s) {
		return s
	}
	buf := append(c.b[:len(c.b):len(c.b)], s...)
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	c.b = append(c.b[:0], buf[cut:]...)
	return strings.ToValidUTF8(string(buf[:cut]), "\uFFFD")
}

// rest returns what is still carried (an incomplete character at the end
// of the record) as U+FFFD, and empties the carry.
func (c *utf8Carry) rest() string {
	if len(c.b) == 0 {
		return ""
	}
	c.b = c.b[:0]
	return "\uFFFD"
}
