package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// Every parameter check answers with a clear error and the server keeps
// serving.
func TestArgumentChecks(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	id := c.open(nil)
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	cases := []struct {
		tool string
		args any
		want string
	}{
		{tools.TerminalOpen, obj{"type": ""}, "type must be a non-empty string"},
		{tools.TerminalOpen, obj{"type": 3}, "type must be a non-empty string"},
		{tools.TerminalOpen, obj{"type": "nope"}, `no PTY backend registered for type "nope"`},
		{tools.TerminalOpen, obj{"name": 5}, "name must be a string"},
		{tools.TerminalOpen, obj{"cwd": true}, "cwd must be a string"},
		{tools.TerminalOpen, obj{"colour": "red"}, `unknown parameter "colour"`},
		{tools.TerminalOpen, raw(`[1,2]`), "arguments must be a JSON object"},
		{tools.TerminalSend, obj{"text": "x"}, "sessionId must be a non-empty string"},
		{tools.TerminalSend, obj{"sessionId": "", "text": "x"}, "sessionId must be a non-empty string"},
		{tools.TerminalSend, obj{"sessionId": 12, "text": "x"}, "sessionId must be a non-empty string"},
		{tools.TerminalSend, obj{"sessionId": id}, "text is required"},
		{tools.TerminalSend, obj{"sessionId": id, "text": 5}, "text must be a string"},
		{tools.TerminalSend, obj{"sessionId": id, "text": "x", "submit": "yes"}, "submit must be a boolean"},
		{tools.TerminalSend, obj{"sessionId": id, "text": "x", "runInBackground": 1}, "runInBackground must be a boolean"},
		{tools.TerminalSend, obj{"sessionId": id, "text": strings.Repeat("y", tools.DefaultMaxTextBytes+1)}, "text is 262145 bytes; the limit is 262144"},
		{tools.TerminalSend, obj{"sessionId": "pty-0000", "text": "x"}, "unknown PTY session pty-0000"},
		{tools.TerminalRead, obj{"sessionId": id, "offset": 1.5}, "offset must be an integer, got 1.5"},
		{tools.TerminalRead, obj{"sessionId": id, "offset": "3"}, `offset must be an integer, got "3"`},
		{tools.TerminalRead, obj{"sessionId": id, "offset": -1}, "offset must be an integer >= 0, got -1"},
		{tools.TerminalRead, obj{"sessionId": id, "offset": 1e300}, "offset must be an integer, got 1e+300"},
		{tools.TerminalRead, obj{"sessionId": id, "count": 0}, "count must be an integer >= 1, got 0"},
		{tools.TerminalRead, obj{"sessionId": id, "count": true}, "count must be an integer, got true"},
		{tools.TerminalRead, obj{"sessionId": id, "count": 2.25}, "count must be an integer, got 2.25"},
		{tools.TerminalSignal, obj{"sessionId": id}, "signal must be one of"},
		{tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGUSR1"}, `signal must be one of [SIGINT SIGTERM SIGKILL SIGTSTP SIGHUP], got "SIGUSR1"`},
		{tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGKILL"}, "refusing to SIGKILL the terminal shell"},
		{tools.TerminalClose, obj{}, "sessionId must be a non-empty string"},
		{tools.TerminalList, obj{"all": true}, `unknown parameter "all"`},
		{tools.TaskOutput, obj{}, "taskId must be a non-empty string"},
		{tools.TaskOutput, obj{"taskId": "pty-send-x", "timeoutMs": 1.5}, "timeoutMs must be an integer, got 1.5"},
		{tools.TaskOutput, obj{"taskId": "pty-send-x", "timeoutMs": -1}, "timeoutMs must be an integer >= 0, got -1"},
		{tools.TaskOutput, obj{"taskId": "pty-send-x", "wait": "no"}, "wait must be a boolean"},
		{tools.TaskOutput, obj{"taskId": "pty-send-x"}, "unknown task pty-send-x"},
		{tools.TaskKill, obj{"taskId": ""}, "taskId must be a non-empty string"},
		{tools.TaskKill, obj{"taskId": "pty-send-x", "reason": 3}, "reason must be a string"},
		{tools.TaskKill, obj{"taskId": "pty-send-x"}, "unknown task pty-send-x"},
	}
	for _, tc := range cases {
		c.fails(tc.tool, tc.args, tc.want)
	}
	// A call without an owner is refused before anything runs.
	if r := p.srv.tools.Call(testkit.Ctx(t), messages.Owner{}, tools.TerminalList, nil); !r.IsError || r.Text != "Error: terminal tools require an initiating agent" || !errors.Is(r.Err, tools.ErrNoAgent) {
		t.Fatalf("no owner: %+v", r)
	}
	// Argument errors are typed for Go callers: the runtime's sentinel.
	if r := p.srv.tools.Call(testkit.Ctx(t), messages.NewOwner("x"), tools.TerminalRead, json.RawMessage(`{"sessionId":"a","count":1.5}`)); !errors.Is(r.Err, messages.ErrInvalidArgument) {
		t.Fatalf("typed argument error: %v", r.Err)
	}
	// Offsets written as integral floats are integers.
	r := c.ok(tools.TerminalRead, obj{"sessionId": id, "offset": 0.0, "count": 1e2})
	if r.num("lineBegin") != 0 {
		t.Fatalf("read: %v", r.S)
	}
	// An unknown tool is a protocol error naming it; the server keeps
	// serving.
	if _, err := c.callErr("terminal_teleport", obj{}); err == nil || !strings.Contains(err.Error(), `unknown tool "terminal_teleport"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	if r := c.send(id, "echo still-serving"); !strings.Contains(r.Text, "still-serving\n") {
		t.Fatalf("after bad calls: %q", r.Text)
	}
}

func TestBackgroundDisabled(t *testing.T) {
	p := newInproc(t, tools.Options{DisableRunInBackground: true})
	c := p.client()
	id := c.open(nil)
	for _, v := range []any{true, false, "yes"} {
		c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "echo x", "runInBackground": v},
			"background terminal sends are disabled by tool-pty configuration")
	}
	if _, err := c.callErr(tools.TaskOutput, obj{"taskId": "x"}); err == nil {
		t.Fatal("task_output must not exist with background sends disabled")
	}
	c.send(id, "echo fine")
}

// With the smallest cap, every text (results and errors) fits, is valid
// UTF-8, and ends in exactly one marker when cut.
func TestResultCap64(t *testing.T) {
	p := newInproc(t, tools.Options{MaxResultBytes: 64})
	c := p.client()
	id := c.open(nil)
	r := c.send(id, `python3 -c "print('é'*500)"`)
	check := func(what string, r result) {
		t.Helper()
		if len(r.Text) > 64 || !utf8.ValidString(r.Text) {
			t.Fatalf("%s: %d bytes %q", what, len(r.Text), r.Text)
		}
	}
	check("send", r)
	if !strings.HasSuffix(r.Text, "\n[wait: stdin_read]\n[session: running]\n[output truncated]") || strings.Count(r.Text, "[output truncated]") != 1 {
		t.Fatalf("send at cap 64: %q", r.Text)
	}
	if v := r.str("viewport"); !strings.Contains(v, strings.Repeat("é", 500)) {
		t.Fatalf("the structured viewport is not cut: %d bytes", len(v))
	}
	check("read", c.ok(tools.TerminalRead, obj{"sessionId": id}))
	check("error", c.fails(tools.TerminalSend, obj{"sessionId": strings.Repeat("é", 100), "text": ""}, "Error: unknown PTY session é"))
	bg := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": `python3 -c "print('ü'*300)"`, "runInBackground": true})
	check("ack", bg)
	r = c.ok(tools.TaskOutput, obj{"taskId": bg.str("taskId")})
	check("task_output", r)
	if !strings.HasSuffix(r.Text, "\n[output truncated]\n[status: completed, wait: stdin_read, exit code 0]") && !strings.HasSuffix(r.Text, "[output truncated]") {
		t.Fatalf("task_output at cap 64: %q", r.Text)
	}
	if strings.Count(r.Text, "[output truncated]") != 1 {
		t.Fatalf("marker duplicated: %q", r.Text)
	}
}
