package tools

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ptyactor/ptyactor/messages"
)

// ErrInvalidArgument is messages.ErrInvalidArgument: every argument-check
// failure of a tool wraps it, as the runtime's refusals of malformed
// requests do, so one errors.Is answers for both. The error's message is
// what the model reads.
var ErrInvalidArgument = messages.ErrInvalidArgument

// args is a decoded argument object. Every getter checks the JSON type
// itself: the schema is advice to the model, not a guarantee.
type args map[string]json.RawMessage

// parseArgs accepts a JSON object (or nothing, meaning {}) whose keys are
// all in allowed.
func parseArgs(raw json.RawMessage, allowed []string) (args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return args{}, nil
	}
	if raw[0] != '{' {
		return nil, messages.InvalidArgument("arguments must be a JSON object")
	}
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, messages.InvalidArgument("arguments are not valid JSON: %v", err)
	}
	var unknown []string
	for k := range a {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, messages.InvalidArgument("unknown parameter %s (allowed: %s)", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return a, nil
}

func (a args) has(name string) bool {
	v, ok := a[name]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// str returns a string parameter; required ones must be non-empty.
func (a args) str(name string, required bool) (string, error) {
	if !a.has(name) {
		if required {
			return "", messages.InvalidArgument("%s must be a non-empty string", name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(a[name], &s); err != nil {
		if required {
			return "", messages.InvalidArgument("%s must be a non-empty string", name)
		}
		return "", messages.InvalidArgument("%s must be a string", name)
	}
	if required && s == "" {
		return "", messages.InvalidArgument("%s must be a non-empty string", name)
	}
	return s, nil
}

// text returns a required string that may be empty.
func (a args) text(name string) (string, error) {
	if !a.has(name) {
		return "", messages.InvalidArgument("%s is required (a string; it may be empty)", name)
	}
	var s string
	if err := json.Unmarshal(a[name], &s); err != nil {
		return "", messages.InvalidArgument("%s must be a string", name)
	}
	return s, nil
}

// strings returns an optional array of strings.
func (a args) strings(name string) ([]string, error) {
	if !a.has(name) {
		return nil, nil
	}
	var v []string
	if err := json.Unmarshal(a[name], &v); err != nil {
		return nil, messages.InvalidArgument("%s must be an array of strings", name)
	}
	return v, nil
}

func (a args) boolean(name string, def bool) (bool, error) {
	if !a.has(name) {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(a[name], &b); err != nil {
		return false, messages.InvalidArgument("%s must be a boolean (true or false)", name)
	}
	return b, nil
}

// integer returns an integer parameter, or nil when it is absent. JSON
// numbers with a fraction (1.5), strings ("3"), booleans and values beyond
// messages.MaxSafeInteger are rejected; 3.0 and 1e2 are integers and
// accepted. The range is not checked here: it is the rule of whoever owns
// the value (the runtime's messages.ReadRequest.Resolve for paging, the
// tool for its own parameters).
func (a args) integer(name string) (*int, error) {
	if !a.has(name) {
		return nil, nil
	}
	raw := bytes.TrimSpace(a[name])
	if len(raw) == 0 || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return nil, notInteger(name, raw)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.Trunc(f) != f || math.Abs(f) > messages.MaxSafeInteger {
		return nil, notInteger(name, raw)
	}
	v := int(f)
	return &v, nil
}

func notInteger(name string, raw []byte) error {
	return messages.InvalidArgument("%s must be an integer, got %s", name, clip(string(raw), 40))
}

// clip bounds s to n bytes plus an ellipsis for a message. s may be raw
// argument bytes, which JSON does not require to be UTF-8: invalid
// sequences become U+FFFD so the message stays valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	return headUTF8(s, n) + "…"
}
