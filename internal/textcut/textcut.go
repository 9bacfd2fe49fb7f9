// Package textcut cuts UTF-8 text to a byte bound without splitting a
// character.
package textcut

import "unicode/utf8"

// Head returns the largest n <= limit at which s can be cut without
// splitting a character: s[:n] is the longest head of s within limit
// bytes. A negative limit counts as 0. In valid UTF-8 at most three
// continuation bytes are stepped back over; the bound keeps the cost
// constant if s is not valid.
func Head[T ~string | ~[]byte](s T, limit int) int {
	if limit >= len(s) {
		return len(s)
	}
	n := max(limit, 0)
	for n > 0 && n > limit-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Tail returns the smallest i >= len(s)-limit at which a character of s
// starts (or len(s)): s[i:] is the longest tail of s within limit bytes.
// A negative limit counts as 0. In valid UTF-8 at most three continuation
// bytes are stepped over; the bound keeps the cost constant if s is not
// valid.
func Tail[T ~string | ~[]byte](s T, limit int) int {
	if limit >= len(s) {
		return 0
	}
	i := len(s) - max(limit, 0)
	for n := 0; i < len(s) && n < utf8.UTFMax-1 && !utf8.RuneStart(s[i]); n++ {
		i++
	}
	return i
}
