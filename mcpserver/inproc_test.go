package mcpserver

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

func TestListToolsSchemas(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		p := newInproc(t, tools.Options{DisableRunInBackground: disabled})
		c := p.client()
		if got := c.cs.InitializeResult().Instructions; got != p.srv.tools.Guidance() || !strings.HasPrefix(got, tools.Guidance) || strings.Contains(got, "runInBackground") != !disabled {
			t.Errorf("disabled=%v: instructions %q", disabled, got)
		}
		res, err := c.cs.ListTools(testkit.Ctx(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			if tl.OutputSchema == nil || tl.InputSchema == nil || tl.Description == "" {
				t.Errorf("%s: missing schema or description", tl.Name)
			}
			if tl.Name == tools.TerminalSend {
				in, _ := json.Marshal(tl.InputSchema)
				has := strings.Contains(string(in), "runInBackground")
				if has == disabled {
					t.Errorf("disabled=%v: runInBackground in schema = %v", disabled, has)
				}
				if strings.Contains(tl.Description, "Background mode") == disabled {
					t.Errorf("disabled=%v: description %q", disabled, tl.Description)
				}
			}
		}
		want := "terminal_open terminal_send terminal_wait terminal_screen terminal_resize terminal_mark terminal_read terminal_signal terminal_close terminal_list"
		if !disabled {
			want += " task_output task_kill"
		}
		if got := strings.Join(names, " "); !sameSet(got, want) {
			t.Errorf("disabled=%v: tools %q, want %q", disabled, got, want)
		}
	}
}

func sameSet(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	m := map[string]bool{}
	for _, s := range fa {
		m[s] = true
	}
	for _, s := range fb {
		if !m[s] {
			return false
		}
	}
	return true
}

func TestOptionsValidation(t *testing.T) {
	p := newInproc(t, tools.Options{})
	for _, o := range []tools.Options{{MaxResultBytes: 63}, {MaxResultBytes: -1}, {WaitTimeout: 700 * time.Second}} {
		_, err := tools.New(p.svc, o)
		var ce *messages.ConfigError
		if !errors.Is(err, tools.ErrConfig) || !errors.As(err, &ce) {
			t.Errorf("%+v: err %v, want a *messages.ConfigError matching ErrConfig", o, err)
		}
	}
	if _, err := tools.New(p.svc, tools.Options{MaxResultBytes: 64}); err != nil {
		t.Errorf("64 must be accepted: %v", err)
	}
}

// A whole lifecycle over MCP: state kept, exit codes, a REPL proven
// waiting by the kernel, paging, signal, close, list.
func TestLifecycleInMemory(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	r := c.ok(tools.TerminalOpen, obj{"name": "dev", "cwd": "/tmp"})
	id := r.str("sessionId")
	if !strings.HasPrefix(r.Text, "started terminal session "+id+" (dev) [type: shell]\n") || r.str("motd") == "" {
		t.Fatalf("open: %q %v", r.Text, r.S)
	}
	c.send(id, "export GREETING=hello-$((6*7)) && cd /")
	r = c.send(id, `echo "$GREETING"; pwd`)
	if !strings.Contains(r.Text, "hello-42\n/\n") || !strings.Contains(r.Text, "\n[wait: stdin_read]\n[exit code: 0]\n[session: running]") {
		t.Fatalf("state not kept: %q", r.Text)
	}
	if r.str("kind") != "foreground" || r.str("waitReason") != "stdin_read" || r.num("exitCode") != 0 || r.S["truncated"] != false {
		t.Fatalf("structured: %v", r.S)
	}
	r = c.send(id, "false")
	if r.num("exitCode") != 1 || !strings.Contains(r.Text, "[exit code: 1]") {
		t.Fatalf("exit code: %q %v", r.Text, r.S)
	}

	r = c.send(id, "python3 -q")
	if r.str("waitReason") != "stdin_read" || r.str("reader") != "python3" || !strings.Contains(r.Text, "[reader: python3]") {
		t.Fatalf("python REPL: %q %v", r.Text, r.S)
	}
	r = c.send(id, "print(6*7000+1)")
	if r.str("waitReason") != "stdin_read" || !strings.Contains(r.Text, "42001") {
		t.Fatalf("REPL eval: %q", r.Text)
	}
	c.send(id, "exit()")

	c.send(id, "seq 1 50")
	r = c.ok(tools.TerminalRead, obj{"sessionId": id, "offset": 2, "count": 3})
	if r.num("lineEnd")-r.num("lineBegin") != 3 || r.num("totalLines") < 50 || !regexp.MustCompile(`\n\[lines: 2-5 of \d+\]$`).MatchString(r.Text) {
		t.Fatalf("read page: %q %v", r.Text, r.S)
	}
	if !strings.HasPrefix(r.Text, "47\n48\n49\n[lines") { // the prompt line and "50" are skipped
		t.Fatalf("page content: %q", r.Text)
	}

	// SIGINT to a foreground sleep, delivered while a background send
	// holds the terminal.
	bg := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "echo armed; sleep 100", "runInBackground": true})
	task := bg.str("taskId")
	waitOutput(t, c, task, "armed")
	waitForeground(t, c, id, "sleep")
	r = c.ok(tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGINT"})
	if r.S["delivered"] != true || r.num("targetPgid") <= 0 || !strings.HasPrefix(r.Text, "delivered SIGINT to foreground process group ") {
		t.Fatalf("signal: %q %v", r.Text, r.S)
	}
	r = c.ok(tools.TaskOutput, obj{"taskId": task, "timeoutMs": 20000})
	if !strings.Contains(r.Text, "[status: completed, wait: stdin_read, exit code 130]") {
		t.Fatalf("interrupted task: %q", r.Text)
	}

	r = c.ok(tools.TerminalList, nil)
	if !strings.HasPrefix(r.Text, id+" (dev) [shell] running pid=") {
		t.Fatalf("list: %q", r.Text)
	}
	r = c.ok(tools.TerminalClose, obj{"sessionId": id})
	if r.Text != "closed terminal session "+id || r.str("outcome") != "closed" || len(r.S["killed"].([]any)) == 0 {
		t.Fatalf("close: %q %v", r.Text, r.S)
	}
	r = c.ok(tools.TerminalList, obj{})
	if r.Text != "(no terminal sessions)" || len(r.S["sessions"].([]any)) != 0 {
		t.Fatalf("list after close: %q %v", r.Text, r.S)
	}
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "echo"}, "unknown PTY session "+id)
}

// waitOutput polls task_output (without waiting for the end) until the
// collected output contains want; it returns everything collected.
func waitOutput(t *testing.T, c *client, task, want string) string {
	t.Helper()
	var all string
	testkit.WaitFor(t, 20*time.Second, "task output "+want, func() bool {
		r := c.ok(tools.TaskOutput, obj{"taskId": task, "wait": false})
		all += r.str("text")
		return strings.Contains(all, want)
	})
	return all
}

// waitForeground waits until the terminal's foreground group runs comm
// (the background command is running, not merely echoed).
func waitForeground(t *testing.T, c *client, id, comm string) {
	t.Helper()
	// The session's shell pid, then its foreground group from /proc.
	r := c.ok(tools.TerminalList, nil)
	var pid float64
	for _, s := range r.S["sessions"].([]any) {
		if m := s.(map[string]any); m["sessionId"] == id {
			pid = m["pid"].(float64)
		}
	}
	testkit.WaitFor(t, 20*time.Second, comm+" in the foreground", func() bool { return foregroundComm(int(pid)) == comm })
}
