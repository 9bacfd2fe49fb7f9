package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/internal/textcut"
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

// maxProperties bounds the properties of an argument object: a tool has
// at most a dozen parameters, so more is a malformed call (or one that
// would make the server decode millions of names before refusing them).
const maxProperties = 64

// maxUnknownNamed bounds how many unknown parameter names a refusal
// quotes.
const maxUnknownNamed = 8

// LegacyNames maps the snake_case spellings parameters had before the
// camelCase convention (docs/mcp.md, "Names") to today's: parseArgs still
// accepts them so clients written against the old schema keep working,
// but no schema lists them, so a model only ever sees one spelling.
var LegacyNames = map[string]string{
	"task_id":           "taskId",
	"timeout_ms":        "timeoutMs",
	"silence_ms":        "silenceMs",
	"run_in_background": "runInBackground",
	"ttl_ms":            "ttlMs",
}

// parseArgs accepts a JSON object (or nothing, meaning {}) whose keys are
// all in allowed. It reads the object a property at a time and keeps only
// the allowed ones, so the work is bounded by the allowed parameters, not
// by what the caller sent: more than maxProperties properties are refused
// at the first one beyond.
func parseArgs(raw json.RawMessage, allowed []string) (args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return args{}, nil
	}
	if raw[0] != '{' {
		return nil, messages.InvalidArgument("arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	notJSON := func(err error) error { return messages.InvalidArgument("arguments are not valid JSON: %v", err) }
	if _, err := dec.Token(); err != nil { // the '{' checked above
		return nil, notJSON(err)
	}
	a := args{}
	spelling := map[string]string{} // how each parameter was spelled
	var unknown []string
	moreUnknown := 0
	for n := 0; dec.More(); n++ {
		if n == maxProperties {
			return nil, messages.InvalidArgument("arguments have more than %d properties; the limit is %d", maxProperties, maxProperties)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, notJSON(err)
		}
		k, _ := tok.(string) // a key is always a string once Token succeeds
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notJSON(err)
		}
		spelled := k
		if name, ok := LegacyNames[k]; ok && slices.Contains(allowed, name) {
			k = name
		}
		if prev, seen := spelling[k]; seen && prev != spelled {
			return nil, messages.InvalidArgument("%s and %s are one parameter; give it once, as %s", prev, spelled, k)
		}
		if slices.Contains(allowed, k) {
			spelling[k] = spelled
		}
		switch {
		case slices.Contains(allowed, k):
			a[k] = v
		case len(unknown) < maxUnknownNamed:
			unknown = append(unknown, strconv.Quote(clip(k, 40)))
		default:
			moreUnknown++
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, notJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notJSON(errors.New("data after the object"))
	}
	if len(unknown) > 0 {
		return nil, errUnknown(unknown, moreUnknown, allowed)
	}
	return a, nil
}

// errUnknown refuses unknown parameters: the first maxUnknownNamed of
// them quoted and sorted, how many more, and the allowed ones.
func errUnknown(unknown []string, more int, allowed []string) error {
	slices.Sort(unknown)
	rest := ""
	if more > 0 {
		rest = fmt.Sprintf(" and %d more", more)
	}
	return messages.InvalidArgument("unknown parameter %s%s (allowed: %s)", strings.Join(unknown, ", "), rest, strings.Join(allowed, ", "))
}

// tooLong refuses a JSON string value longer than limit characters
// before decoding it: a string of n characters takes at least n+2 bytes
// of JSON and at most 6n+2 (\uXXXX escapes), so only a value between
// the two is decoded to be counted.
func tooLong(name string, raw json.RawMessage, limit int) error {
	if len(raw) > 6*limit+2 {
		return messages.InvalidArgument("%s is over %d characters; the limit is %d", name, (len(raw)-2)/6, limit)
	}
	return nil
}

// maxChars bounds a string parameter in characters: the bound a real
// caller never reaches, documented in the schema as maxLength. A name
// absent here is bounded by the runtime's rule (name: messages.CheckLabel;
// pattern: messages.WaitPolicy.Validate) or by its own check (text).
var maxChars = map[string]int{
	"sessionId": maxIDChars,
	"taskId":    maxIDChars,
	"type":      messages.MaxLabelChars,
	"cwd":       maxPathChars,
	"reason":    maxReasonChars,
	"until":     16,
	"signal":    16,
	"name":      messages.MaxLabelChars,
	"label":     messages.MaxLabelChars,
	"pattern":   messages.MaxPatternChars,
}

const (
	maxIDChars     = 256
	maxPathChars   = 4096
	maxReasonChars = 1024
)

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
	limit, bounded := maxChars[name]
	if bounded {
		if err := tooLong(name, a[name], limit); err != nil {
			return "", err
		}
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
	if n := utf8.RuneCountInString(s); bounded && n > limit && name != "name" && name != "pattern" {
		// The name's and the pattern's exact bounds are the runtime's
		// rules, which say more (messages.CheckLabel, WaitPolicy.Validate).
		return "", messages.InvalidArgument("%s is %d characters; the limit is %d", name, n, limit)
	}
	return s, nil
}

// text returns a required string that may be empty, of at most
// maxBytes bytes; a longer one is refused before it is decoded when its
// JSON alone shows it (6 bytes of JSON per byte at most).
func (a args) text(name string, maxBytes int) (string, error) {
	if !a.has(name) {
		return "", messages.InvalidArgument("%s is required (a string; it may be empty)", name)
	}
	if raw := a[name]; len(raw) > 6*maxBytes+2 {
		return "", messages.InvalidArgument("%s is over %d bytes; the limit is %d (send large input in pieces, or write it to a file with another tool)", name, (len(raw)-2)/6, maxBytes)
	}
	var s string
	if err := json.Unmarshal(a[name], &s); err != nil {
		return "", messages.InvalidArgument("%s must be a string", name)
	}
	if len(s) > maxBytes {
		return "", messages.InvalidArgument("%s is %d bytes; the limit is %d (send large input in pieces, or write it to a file with another tool)", name, len(s), maxBytes)
	}
	return s, nil
}

// strings returns an optional array of at most maxItems strings of at
// most maxChars characters each. The array is read an element at a time,
// so one beyond the bound is refused without decoding the rest.
func (a args) strings(name string, maxItems, maxChars int) ([]string, error) {
	if !a.has(name) {
		return nil, nil
	}
	bad := errNotStrings(name)
	dec := json.NewDecoder(bytes.NewReader(a[name]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, bad
	}
	v := []string{}
	for dec.More() {
		if len(v) == maxItems {
			return nil, messages.InvalidArgument("%s has more than %d entries; the limit is %d", name, maxItems, maxItems)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad
		}
		if len(raw) > 6*maxChars+2 {
			return nil, messages.InvalidArgument("%s[%d] is over %d characters; the limit is %d", name, len(v), (len(raw)-2)/6, maxChars)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, bad
		}
		if n := utf8.RuneCountInString(s); n > maxChars {
			return nil, messages.InvalidArgument("%s[%d] is %d characters; the limit is %d", name, len(v), n, maxChars)
		}
		v = append(v, s)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'; the value was checked as JSON
		return nil, bad
	}
	return v, nil
}

func errNotStrings(name string) error {
	return messages.InvalidArgument("%s must be an array of strings", name)
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
	return s[:textcut.Head(s, n)] + "…"
}

func sessionArg(a args) (messages.SessionID, error) {
	id, err := a.str("sessionId", true)
	return messages.SessionID(id), err
}

func taskArg(a args) (messages.TaskID, error) {
	id, err := a.str("taskId", true)
	return messages.TaskID(id), err
}
