package messages

import (
	"fmt"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// Bounds of a request's values. A real caller never comes near them; a
// request beyond one is refused with an error wrapping ErrInvalidArgument
// before any work is done for it (a regular expression of megabytes
// compiles into hundreds of megabytes, and every key is written).
const (
	// MaxLabelChars bounds a label a caller gives (a terminal's name), in
	// characters (Unicode code points).
	MaxLabelChars = 128
	// MaxPatternChars bounds WaitPolicy.Pattern, in characters, and
	// MaxPatternSize what it expands to (its repetitions written out, as
	// the compiled program holds them): "(a|b){1000}" repeated within
	// 4096 characters would compile into hundreds of megabytes.
	MaxPatternChars = 4096
	MaxPatternSize  = 16384
	// MaxKeys bounds SendRequest.Keys, and MaxKeyChars each key's name
	// (the longest meaningful one, "meta-control-pagedown", has 21).
	MaxKeys     = 1024
	MaxKeyChars = 64
)

// LabelError is a label refused by CheckLabel. It wraps ErrInvalidArgument.
// The message does not quote the label: it may be long, or forge lines.
type LabelError struct {
	Kind   string // what the label names, e.g. "terminal name"
	Reason string // e.g. "must be at most 128 characters, got 300"
}

func (e *LabelError) Error() string { return e.Kind + " " + e.Reason }

func (e *LabelError) Unwrap() error { return ErrInvalidArgument }

// CheckLabel is the one rule for every label a caller gives (a terminal's
// name; later marks and share labels): a label appears in lists and
// results, one per line, so it is valid UTF-8, non-empty, at most
// MaxLabelChars characters, and holds no control or format character
// (Unicode Cc, Cf: newlines, escapes, bidirectional overrides, zero-width
// characters) nor a line or paragraph separator (Zl, Zp). kind names the
// label in the error, a *LabelError.
func CheckLabel(kind, s string) error {
	if s == "" {
		return &LabelError{kind, "must not be empty"}
	}
	if !utf8.ValidString(s) {
		return &LabelError{kind, "must be valid UTF-8"}
	}
	if n := utf8.RuneCountInString(s); n > MaxLabelChars {
		return &LabelError{kind, fmt.Sprintf("must be at most %d characters, got %d", MaxLabelChars, n)}
	}
	i := 0
	for _, r := range s {
		i++
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return &LabelError{kind, fmt.Sprintf("must not contain control or format characters (%U at character %d)", r, i)}
		}
	}
	return nil
}

// Validate checks the policy's values: no negative duration, a pattern of
// at most MaxPatternChars characters that parses (RE2) and expands to at
// most MaxPatternSize. Its errors wrap ErrInvalidArgument.
// The runtime validates every send's policy before it compiles the
// pattern.
func (p WaitPolicy) Validate() error {
	if p.Timeout < 0 || p.Silence < 0 {
		return InvalidArgument("wait timeout and silence must not be negative")
	}
	if len(p.Pattern) > MaxPatternChars { // bytes >= characters: count only then
		if n := utf8.RuneCountInString(p.Pattern); n > MaxPatternChars {
			return InvalidArgument("pattern is %d characters; the limit is %d", n, MaxPatternChars)
		}
	}
	if p.Pattern != "" {
		re, err := syntax.Parse(p.Pattern, syntax.Perl)
		if err != nil {
			return InvalidArgument("wait pattern: %v", err)
		}
		if expandedSize(re, MaxPatternSize) > MaxPatternSize {
			return InvalidArgument("pattern expands to more than %d steps once its repetitions are written out; the limit is %d", MaxPatternSize, MaxPatternSize)
		}
	}
	return nil
}

// expandedSize estimates the size of re's compiled program, counted
// repetitions written out, stopping once it passes limit (the result is
// then limit+1).
func expandedSize(re *syntax.Regexp, limit int) int {
	add := func(a, b int) int { return min(a+b, limit+1) }
	switch re.Op {
	case syntax.OpLiteral:
		return min(len(re.Rune), limit+1)
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return add(expandedSize(re.Sub[0], limit), 2)
	case syntax.OpRepeat:
		n := re.Max
		if n < 0 {
			n = re.Min + 1
		}
		sub := expandedSize(re.Sub[0], limit)
		if n > 0 && sub > (limit+1)/n {
			return limit + 1
		}
		return add(n*sub, n)
	case syntax.OpConcat, syntax.OpAlternate:
		size := len(re.Sub)
		for _, s := range re.Sub {
			if size = add(size, expandedSize(s, limit)); size > limit {
				break
			}
		}
		return size
	}
	return 1
}

// Validate checks the request's bounds (MaxKeys keys of at most
// MaxKeyChars characters, the wait policy); the runtime applies it to
// every send before anything is written. Its errors wrap
// ErrInvalidArgument.
func (r SendRequest) Validate() error {
	if len(r.Keys) > MaxKeys {
		return InvalidArgument("keys has %d entries; the limit is %d", len(r.Keys), MaxKeys)
	}
	for i, k := range r.Keys {
		if n := utf8.RuneCountInString(k); n > MaxKeyChars {
			return InvalidArgument("keys[%d] is %d characters; the limit is %d", i, n, MaxKeyChars)
		}
	}
	return r.Wait.Validate()
}
