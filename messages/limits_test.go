package messages

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckLabel(t *testing.T) {
	for _, ok := range []string{"dev", "build 2", "é日本", strings.Repeat("é", MaxLabelChars), "a-b_c.d:e/f"} {
		if err := CheckLabel("terminal name", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, c := range []struct{ s, want string }{
		{"", "terminal name must not be empty"},
		{strings.Repeat("a", MaxLabelChars+1), "terminal name must be at most 128 characters, got 129"},
		{strings.Repeat("x", 300_000), "got 300000"},
		{"dev\npty-0000 (root) [shell] running", "(U+000A at character 4)"},
		{"a\rb", "U+000D"},
		{"\x1b[2J", "U+001B"},
		{"tab\there", "U+0009"},
		{"\x7f", "U+007F"},
		{"\u0085", "U+0085"},     // NEL (Cc)
		{"evil\u202e", "U+202E"}, // right-to-left override (Cf)
		{"zero\u200bwidth", "U+200B"},
		{"line\u2028sep", "U+2028"},
		{"bad\xffutf8", "must be valid UTF-8"},
	} {
		err := CheckLabel("terminal name", c.s)
		var le *LabelError
		if err == nil || !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &le) || le.Kind != "terminal name" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: err %v, want a *LabelError containing %q", c.s, err, c.want)
		}
		if len(err.Error()) > 200 {
			t.Errorf("%.40q: the error quotes the label: %d bytes", c.s, len(err.Error()))
		}
	}
}

func TestSendRequestValidate(t *testing.T) {
	ok := SendRequest{Keys: make([]string, MaxKeys), Wait: WaitPolicy{Pattern: strings.Repeat("é", MaxPatternChars)}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("at the bounds: %v", err)
	}
	for _, p := range []string{`\$ $`, `Listening on port \d+`, `(?m)^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$`, `[0-9a-f]{40}`, `(error|warning): .{0,200}`, `x{1000}`} {
		if err := (WaitPolicy{Pattern: p}).Validate(); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, c := range []struct {
		r    SendRequest
		want string
	}{
		{SendRequest{Keys: make([]string, MaxKeys+1)}, "keys has 1025 entries; the limit is 1024"},
		{SendRequest{Keys: make([]string, 2_000_000)}, "keys has 2000000 entries"},
		{SendRequest{Keys: []string{"Enter", strings.Repeat("x", MaxKeyChars+1)}}, "keys[1] is 65 characters; the limit is 64"},
		{SendRequest{Wait: WaitPolicy{Pattern: strings.Repeat("x", 3_500_000)}}, "pattern is 3500000 characters; the limit is 4096"},
		{SendRequest{Wait: WaitPolicy{Timeout: -1}}, "must not be negative"},
		{SendRequest{Wait: WaitPolicy{Pattern: strings.Repeat(`(a|b){1000}`, 4096/11)}}, "pattern expands to more than 16384 steps"},
		{SendRequest{Wait: WaitPolicy{Pattern: strings.Repeat(`\pL{1000}`, 4096/9)}}, "pattern expands to more than 16384 steps"},
		{SendRequest{Wait: WaitPolicy{Pattern: `((a{100}){100}){100}`}}, "wait pattern: "},
		{SendRequest{Wait: WaitPolicy{Pattern: "("}}, "wait pattern: "},
	} {
		if err := c.r.Validate(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
}
