package vt

import (
	"unicode"

	"golang.org/x/text/width"
)

// runeWidth returns how many columns r takes: 2 for East Asian wide and
// fullwidth characters (CJK, most emoji), 0 for characters that combine
// with the one before (nonspacing and enclosing marks, format characters
// such as ZWJ, Hangul medial and final jamo), -1 for controls, which are
// not drawn, and 1 for the rest. This is what glibc's wcwidth answers in
// a UTF-8 locale, which is what tmux uses.
func runeWidth(r rune) int {
	switch {
	case r < 0x7f:
		if r < 0x20 {
			return -1
		}
		return 1
	case r < 0xa0:
		return -1 // DEL and the C1 controls
	case r == 0xad:
		return 1 // SOFT HYPHEN is drawn
	case r < 0x300:
		return 1
	case r >= 0x1160 && r <= 0x11ff, r == 0x200b:
		return 0
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
