package tools

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

// Every parameter is bounded, and a request beyond a bound is refused
// with an argument error, before the oversized part is decoded when its
// size shows it; requests at the bounds pass.
func TestArgumentBounds(t *testing.T) {
	rig := newArgRig(t)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	keys := func(n int, k string) string {
		return `["` + strings.TrimSuffix(strings.Repeat(k+`","`, n), `","`) + `"]`
	}
	var unknown strings.Builder
	unknown.WriteString(`{"sessionId":"$SID","text":""`)
	for i := range 100_000 {
		unknown.WriteString(`,"p` + strconv.Itoa(i) + `":0`)
	}
	unknown.WriteString("}")
	for _, c := range []struct {
		name, raw, want string // want "": success
	}{
		{TerminalWait, `{"sessionId":"$SID","timeoutMs":50,"pattern":` + q(strings.Repeat("x", messages.MaxPatternChars)) + `}`, ""},
		{TerminalWait, `{"sessionId":"$SID","timeoutMs":50,"pattern":` + q(strings.Repeat("x", messages.MaxPatternChars+1)) + `}`, "pattern is 4097 characters; the limit is 4096"},
		{TerminalWait, `{"sessionId":"$SID","pattern":` + q(strings.Repeat("x", 100_000)) + `}`, "pattern is over 16666 characters; the limit is 4096"},
		{TerminalWait, `{"sessionId":"$SID","pattern":` + q(strings.Repeat(`(a|b){1000}`, 372)) + `}`, "pattern expands to more than 16384 steps"},
		{TerminalWait, `{"sessionId":"$SID","pattern":` + q(strings.Repeat("x", 3_500_000)) + `}`, "bytes of JSON; the limit is 2046976"},
		{TerminalSend, `{"sessionId":"$SID","text":"","submit":false,"keys":` + keys(messages.MaxKeys, "C-@") + `}`, ""},
		{TerminalSend, `{"sessionId":"$SID","text":"","submit":false,"keys":` + keys(messages.MaxKeys+1, "C-@") + `}`, "keys has more than 1024 entries; the limit is 1024"},
		{TerminalSend, `{"sessionId":"$SID","text":"","keys":["Enter",` + q(strings.Repeat("k", 65)) + `]}`, "keys[1] is 65 characters; the limit is 64"},
		{TerminalSend, `{"sessionId":"$SID","text":"","keys":["Enter",` + q(strings.Repeat("k", 1000)) + `]}`, "keys[1] is over 166 characters; the limit is 64"},
		{TerminalSend, `{"sessionId":"$SID","text":"","keys":["Enter",3]}`, "keys must be an array of strings"},
		{TerminalSend, `{"sessionId":"$SID","text":"","keys":{"a":"b"}}`, "keys must be an array of strings"},
		{TerminalSend, unknown.String(), "arguments have more than 64 properties"},
		{TerminalSend, `{"sessionId":"$SID","text":""` + strings.Repeat(`,"x":0`, maxProperties) + `}`, "arguments have more than 64 properties; the limit is 64"},
		{TerminalSend, `{"sessionId":"$SID","text":"","a":1,"b":2}`, `unknown parameter "a", "b" (allowed: `},
		{TerminalSend, `{"sessionId":"$SID","text":""` + strings.Repeat(`,"x":0`, maxProperties-2) + `}`, `unknown parameter "x", "x", "x", "x", "x", "x", "x", "x" and 54 more (allowed`},
		{TerminalSend, `{"sessionId":"$SID","text":"x"} {}`, "arguments are not valid JSON"},
		{TerminalSend, `{"sessionId":"$SID","text":"x",}`, "arguments are not valid JSON"},
		{TerminalSend, `{"sessionId":"$SID","text":` + q(strings.Repeat("y", DefaultMaxTextBytes+1)) + `}`, "text is 262145 bytes; the limit is 262144"},
		{TerminalSend, `{"sessionId":"$SID","text":` + q(strings.Repeat("\x01", 300_000)) + `}`, "text is over 300000 bytes; the limit is 262144"},
		{TerminalSend, `{"sessionId":"$SID","text":` + q(strings.Repeat("y", 15_000_000)) + `}`, "bytes of JSON; the limit is 2046976"},
		{TerminalSend, `{"sessionId":` + q(strings.Repeat("s", maxIDChars+1)) + `,"text":""}`, "sessionId is 257 characters; the limit is 256"},
		{TerminalOpen, `{"cwd":` + q(strings.Repeat("d", maxPathChars+1)) + `}`, "cwd is 4097 characters; the limit is 4096"},
		{TaskKill, `{"taskId":"t","reason":` + q(strings.Repeat("r", 10_000)) + `}`, "reason is over 1666 characters; the limit is 1024"},
	} {
		ts := rig.small
		r := rig.call(t, ts, c.name, []byte(c.raw))
		switch {
		case c.want == "" && r.IsError:
			t.Errorf("%s(%.80s): %v, want success", c.name, c.raw, r.Err)
		case c.want != "" && (!errors.Is(r.Err, messages.ErrInvalidArgument) || !strings.Contains(r.Err.Error(), c.want)):
			t.Errorf("%s(%.80s): %v, want an argument error containing %q", c.name, c.raw, r.Err, c.want)
		}
	}
}

// A name is a label: the runtime's rule (messages.CheckLabel) refuses
// long names and names with control or format characters, so a list
// shows one line per terminal.
func TestOpenNameIsALabel(t *testing.T) {
	rig := newArgRig(t)
	for _, c := range []struct{ name, want string }{
		{"dev\npty-0000 (forged) [shell] running", "terminal name must not contain control or format characters (U+000A at character 4)"},
		{"evil\u202eved", "U+202E"},
		{strings.Repeat("n", messages.MaxLabelChars+1), "terminal name must be at most 128 characters, got 129"},
		{strings.Repeat("n", 300_000), "name is over 50000 characters; the limit is 128"},
	} {
		b, _ := json.Marshal(map[string]string{"name": c.name})
		r := rig.call(t, rig.plain, TerminalOpen, b)
		if !errors.Is(r.Err, messages.ErrInvalidArgument) || !strings.Contains(r.Err.Error(), c.want) {
			t.Errorf("name %.40q: %v, want %q", c.name, r.Err, c.want)
		}
	}
	if r := rig.call(t, rig.plain, TerminalOpen, []byte(`{"name":"`+strings.Repeat("é", messages.MaxLabelChars)+`"}`)); r.IsError {
		t.Errorf("a name of 128 characters: %v", r.Err)
	}
}

// The schemas show the bounds the checks apply.
func TestSchemaBounds(t *testing.T) {
	rig := newArgRig(t)
	props := map[string]map[string]map[string]any{}
	for _, d := range rig.small.Definitions() {
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(d.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		props[d.Name] = s.Properties
		for name, p := range s.Properties {
			if p["type"] == "string" && p["maxLength"] == nil && p["enum"] == nil {
				t.Errorf("%s.%s: a string without maxLength", d.Name, name)
			}
		}
	}
	for _, c := range []struct {
		tool, param, key string
		want             float64
	}{
		{TerminalOpen, "name", "maxLength", messages.MaxLabelChars},
		{TerminalWait, "pattern", "maxLength", messages.MaxPatternChars},
		{TerminalSend, "keys", "maxItems", messages.MaxKeys},
		{TerminalSend, "text", "maxLength", DefaultMaxTextBytes},
	} {
		if got := props[c.tool][c.param][c.key]; got != c.want {
			t.Errorf("%s.%s %s = %v, want %v", c.tool, c.param, c.key, got, c.want)
		}
	}
	if items := props[TerminalSend]["keys"]["items"].(map[string]any); items["maxLength"] != float64(messages.MaxKeyChars) {
		t.Errorf("keys items: %v", items)
	}
	if d := props[TerminalOpen]["name"]["description"].(string); !strings.Contains(d, "at most 128 characters, no control or format characters") {
		t.Errorf("name description: %q", d)
	}
}
