package tools

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/view"
)

// camelCase is the convention of docs/mcp.md ("Names"): every parameter
// and every result field is lowerCamelCase ASCII.
var camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// walkProps calls f with the path of every property of a JSON Schema,
// nested objects and array items included.
func walkProps(path string, s map[string]any, f func(path, name string)) {
	if props, ok := s["properties"].(map[string]any); ok {
		for name, sub := range props {
			f(path, name)
			if m, ok := sub.(map[string]any); ok {
				walkProps(path+"."+name, m, f)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		walkProps(path+"[]", items, f)
	}
}

// Every input and output property of every tool follows the convention,
// with every option that adds tools, and no legacy spelling is in a schema.
func TestSchemaNamesCamelCase(t *testing.T) {
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{echoBackend{}}})
	ts, err := New(svc, Options{Sharing: &Sharing{Links: view.NewLinks(time.Now), BaseURL: "http://console.test"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range ts.Definitions() {
		for kind, raw := range map[string]json.RawMessage{"input": d.InputSchema, "output": d.OutputSchema} {
			var s map[string]any
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s %s schema: %v", d.Name, kind, err)
			}
			walkProps(d.Name+" "+kind, s, func(path, name string) {
				seen[name] = true
				if !camelCase.MatchString(name) {
					t.Errorf("%s: property %q is not camelCase", path, name)
				}
				if _, legacy := LegacyNames[name]; legacy {
					t.Errorf("%s: legacy spelling %q is in the schema", path, name)
				}
			})
		}
	}
	// The renamed ones are there under their new names (the walk saw the
	// schemas this test means).
	for old, name := range LegacyNames {
		if !seen[name] {
			t.Errorf("no schema has %q (once %q)", name, old)
		}
	}
}

// A name a result returns is the name a tool takes back: terminal_send's
// taskId goes to task_output and task_kill as taskId; a send while the
// task runs is refused with SEND_ACTIVE naming the task and the tools to
// call; the old spellings still work, and both spellings at once are
// refused.
func TestTaskIDRoundTrip(t *testing.T) {
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{local.New(local.Options{})}})
	owner := testkit.Owner(t, svc, "agent")
	ts, err := New(svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := toolCaller(t, ts, owner, 60*time.Second)
	id := openTerminal(t, call)
	r := call(TerminalSend, map[string]any{"sessionId": id, "text": "sleep 600", "runInBackground": true})
	bg, ok := r.Structured.(BackgroundSendValue)
	if r.IsError || !ok || bg.TaskID == "" {
		t.Fatalf("background send: %q (%v)", r.Text, r.Err)
	}
	// The result's field, as a client reads it, is the parameter's name.
	var fields map[string]any
	b, _ := json.Marshal(r.Structured)
	_ = json.Unmarshal(b, &fields)
	if fields["taskId"] != bg.TaskID {
		t.Fatalf("result fields %v", fields)
	}
	r = call(TaskOutput, map[string]any{"taskId": fields["taskId"], "wait": false})
	if out, ok := r.Structured.(TaskOutputValue); r.IsError || !ok || out.TaskID != bg.TaskID || out.Task.Status != string(messages.TaskRunning) {
		t.Fatalf("task_output with taskId: %q (%v)", r.Text, r.Err)
	}
	r = call(TaskOutput, map[string]any{"task_id": bg.TaskID, "wait": false, "timeout_ms": 1})
	if r.IsError {
		t.Fatalf("task_output with the old spellings: %q (%v)", r.Text, r.Err)
	}
	r = call(TaskOutput, map[string]any{"task_id": bg.TaskID, "taskId": bg.TaskID})
	if !r.IsError || !errors.Is(r.Err, ErrInvalidArgument) || !strings.Contains(r.Text, "taskId and task_id are one parameter") {
		t.Fatalf("both spellings: %q (%v)", r.Text, r.Err)
	}
	// A send while the task runs, foreground and background.
	for _, args := range []map[string]any{
		{"sessionId": id, "text": "echo hi"},
		{"sessionId": id, "text": "echo hi", "runInBackground": true},
	} {
		r = call(TerminalSend, args)
		if !r.IsError || !errors.Is(r.Err, messages.ErrSendActive) {
			t.Fatalf("send during the task %v: %q (%v)", args, r.Text, r.Err)
		}
		for _, want := range []string{bg.TaskID, "task_output", "task_kill", "taskId"} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("the refusal does not name %q:\n%s", want, r.Text)
			}
		}
	}
	r = call(TaskKill, map[string]any{"taskId": bg.TaskID})
	if k, ok := r.Structured.(TaskKillValue); r.IsError || !ok || k.TaskID != bg.TaskID {
		t.Fatalf("task_kill with taskId: %q (%v)", r.Text, r.Err)
	}
	r = call(TaskOutput, map[string]any{"taskId": bg.TaskID})
	if out, ok := r.Structured.(TaskOutputValue); r.IsError || !ok || out.Task.Status != string(messages.TaskKilled) {
		t.Fatalf("after task_kill: %q (%v)", r.Text, r.Err)
	}
	if r = call(TerminalClose, map[string]any{"sessionId": id}); r.IsError {
		t.Fatal(r.Text)
	}
}
