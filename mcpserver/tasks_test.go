package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// A background send: the ack, output collected in pieces (each piece only
// once), and the completion detail.
func TestBackgroundFlow(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	id := c.open(nil)
	// The task waits at a gate until the test opens it, so it still holds
	// the session when the test checks that; until prompt: silence does
	// not end it while it waits.
	gate := newGate(t)
	c.send(id, "gate="+gate)
	text := "read _ < $gate; for i in 1 2 3 4 5; do echo tick$i; sleep 0.15; done; (exit 7)"
	r := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": text, "runInBackground": true, "until": "prompt"})
	task := r.str("taskId")
	if r.Text != "started background task "+task || r.str("kind") != "background" || !strings.HasPrefix(task, "pty-send-") {
		t.Fatalf("ack: %q %v", r.Text, r.S)
	}
	// The send holds the session: a foreground send is refused meanwhile.
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "echo no"}, "already has an active send")
	openGate(t, gate)
	all := waitOutput(t, c, task, "tick2")
	var last result
	for i := 0; i < 100; i++ {
		last = c.ok(tools.TaskOutput, obj{"taskId": task, "timeoutMs": 20000})
		all += last.str("text")
		if last.S["task"].(map[string]any)["status"] != "running" {
			break
		}
	}
	if !strings.HasSuffix(last.Text, "\n[status: completed, wait: stdin_read, exit code 7]") {
		t.Fatalf("completion: %q", last.Text)
	}
	tv := last.S["task"].(map[string]any)
	if tv["waitReason"] != "stdin_read" || tv["exitCode"] != 7.0 || tv["finishedAt"] == "" || tv["label"] != id+": "+text {
		t.Fatalf("task value: %v", tv)
	}
	for i := 1; i <= 5; i++ {
		if n := strings.Count(all, "tick"+string(rune('0'+i))+"\r\n") + strings.Count(all, "tick"+string(rune('0'+i))+"\n"); n != 1 {
			t.Fatalf("tick%d seen %d times in %q", i, n, all)
		}
	}
	// Nothing new afterwards.
	r = c.ok(tools.TaskOutput, obj{"taskId": task})
	if r.Text != "(no new output)\n[status: completed, wait: stdin_read, exit code 7]" {
		t.Fatalf("after completion: %q", r.Text)
	}
	r = c.ok(tools.TaskKill, obj{"taskId": task})
	if r.str("outcome") != "already-finished" || r.Text != "task "+task+" had already finished [status: completed, wait: stdin_read, exit code 7]" {
		t.Fatalf("kill after the end: %q", r.Text)
	}
	// The session is free again.
	c.send(id, "echo free")
}

// task_kill interrupts with a real SIGINT even when the terminal does not
// turn ^C into a signal (stty -isig), and when the program itself turned
// ISIG off (python in raw-ish mode).
func TestTaskKillWithoutISIG(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	id := c.open(nil)
	for _, cmd := range []struct{ text, comm string }{
		{"stty -isig; echo armed; sleep 100; stty isig", "sleep"},
		{`python3 -c "import termios,sys,time
a=termios.tcgetattr(0); a[3]&=~termios.ISIG; termios.tcsetattr(0,termios.TCSANOW,a)
print('armed',flush=True); time.sleep(100)"`, "python3"},
	} {
		r := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": cmd.text, "runInBackground": true})
		task := r.str("taskId")
		waitOutput(t, c, task, "armed")
		waitForeground(t, c, id, cmd.comm)
		r = c.ok(tools.TaskKill, obj{"taskId": task, "reason": "test"})
		if r.Text != "requested cancellation of task "+task || r.str("outcome") != "cancellation-requested" {
			t.Fatalf("kill: %q", r.Text)
		}
		if st := r.S["task"].(map[string]any)["status"]; st != "stopping" && st != "killed" {
			t.Fatalf("status right after kill: %v", st)
		}
		r = c.ok(tools.TaskOutput, obj{"taskId": task, "timeoutMs": 20000})
		if !strings.Contains(r.Text, "[status: killed, wait: stdin_read") {
			t.Fatalf("%s: after kill: %q", cmd.comm, r.Text)
		}
		c.send(id, "stty sane")
	}
}

// A failed background start creates no task; a task whose session is
// closed reports the session's exit.
func TestBackgroundFailures(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	id := c.open(nil)
	c.fails(tools.TerminalSend, obj{"sessionId": "pty-nope", "text": "x", "runInBackground": true}, "unknown PTY session pty-nope")
	r := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "sleep 100", "runInBackground": true})
	task := r.str("taskId")
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "echo", "runInBackground": true}, "")
	c.ok(tools.TerminalClose, obj{"sessionId": id})
	r = c.ok(tools.TaskOutput, obj{"taskId": task, "timeoutMs": 20000})
	if !strings.Contains(r.Text, "[status: completed, session exited: ") {
		t.Fatalf("task of a closed session: %q", r.Text)
	}
}

// Two MCP sessions are two owners: neither sees, sends to, reads,
// signals, closes nor reads the tasks of the other's sessions; every such
// call is answered exactly like an unknown id. Ending a session disposes
// its owner.
func TestOwnerIsolationInMemory(t *testing.T) {
	p := newInproc(t, tools.Options{})
	a, b := p.client(), p.client()
	id := a.open(nil)
	task := a.ok(tools.TerminalSend, obj{"sessionId": id, "text": "sleep 100", "runInBackground": true}).str("taskId")
	unknown := "pty-0123456789abcdef0123456789abcdef"
	for _, probe := range []string{id, unknown} {
		want := "unknown PTY session " + probe
		b.fails(tools.TerminalSend, obj{"sessionId": probe, "text": "echo hi"}, want)
		b.fails(tools.TerminalRead, obj{"sessionId": probe}, want)
		b.fails(tools.TerminalSignal, obj{"sessionId": probe, "signal": "SIGINT"}, want)
		b.fails(tools.TerminalClose, obj{"sessionId": probe}, want)
	}
	b.fails(tools.TaskOutput, obj{"taskId": task}, "unknown task "+task)
	b.fails(tools.TaskKill, obj{"taskId": task}, "unknown task "+task)
	if r := b.ok(tools.TerminalList, nil); r.Text != "(no terminal sessions)" {
		t.Fatalf("b sees: %q", r.Text)
	}
	if r := a.ok(tools.TerminalList, nil); !strings.HasPrefix(r.Text, id) {
		t.Fatalf("a lost its session: %q", r.Text)
	}
	pid := int(a.ok(tools.TerminalList, nil).S["sessions"].([]any)[0].(map[string]any)["pid"].(float64))
	if p.srv.owned() != 2 {
		t.Fatalf("owners: %d", p.srv.owned())
	}
	_ = a.cs.Close()
	testkit.WaitFor(t, 20*time.Second, "a's owner disposed", func() bool { return p.srv.owned() == 1 })
	if alive(pid) || len(sessionMembers(pid)) > 0 {
		t.Fatalf("a's shell %d or its session members survived: %v", pid, sessionMembers(pid))
	}
}

// A foreground send whose call is cancelled (the client's
// notifications/cancelled, or a Go caller's context) is interrupted with a
// real SIGINT, settles, and frees the session. The cancel comes once sleep
// holds the terminal: a SIGINT that lands while the shell is still starting
// the job is a different case (the runtime's, not the tools').
func TestCancelledSendInterrupts(t *testing.T) {
	p := newInproc(t, tools.Options{})
	// The server's own results of terminal_send calls, as its handler
	// returns them: an MCP client does not wait for the server to finish a
	// call it cancelled.
	sends := make(chan *mcp.CallToolResult, 8)
	p.srv.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params.Name == tools.TerminalSend {
				ctr, _ := res.(*mcp.CallToolResult)
				sends <- ctr
			}
			return res, err
		}
	})
	c := p.client()
	id := c.open(nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.TerminalSend, Arguments: obj{"sessionId": id, "text": "sleep 100"}})
		errc <- err
	}()
	pid := sessionPID(t, c, id)
	testkit.WaitFor(t, 20*time.Second, "sleep in the foreground", func() bool { return foregroundComm(pid) == "sleep" })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// The client's call returned at once; the server's ends when the
	// interrupted send settled. Until then the send holds the session (a
	// send now would be refused as SEND_ACTIVE); once it ended, aborted
	// (the server saw the cancel: a send its deadline ended is no error),
	// the next send runs in the shell (not in sleep) and succeeds.
	select {
	case res := <-sends:
		var text string
		if res != nil && len(res.Content) == 1 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if res == nil || !res.IsError || !strings.HasPrefix(text, "Error: terminal send aborted") {
			t.Fatalf("the server's result of the cancelled call: %+v %q", res, text)
		}
	case <-testkit.Ctx(t).Done():
		t.Fatal("the server did not finish the cancelled call")
	}
	r := c.call(tools.TerminalSend, obj{"sessionId": id, "text": "echo back"})
	if r.IsError || r.S["exitCode"] != 0.0 || !strings.Contains(r.Text, "\nback\n") {
		t.Fatalf("after the cancelled call: %q", r.Text)
	}

	// The same through Toolset.Call: the error says the send was aborted,
	// after it settled; the next send runs in the shell.
	owner := p.srv.ownerFor(testkit.Ctx(t), firstSession(p), "")
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	resc := make(chan tools.Result, 1)
	go func() {
		resc <- p.srv.tools.Call(ctx, owner, tools.TerminalSend, mustRaw(obj{"sessionId": id, "text": "sleep 100"}))
	}()
	testkit.WaitFor(t, 20*time.Second, "sleep in the foreground", func() bool { return foregroundComm(pid) == "sleep" })
	start := time.Now()
	cancel()
	res := <-resc
	if !res.IsError || !errors.Is(res.Err, tools.ErrSendAborted) || !strings.HasPrefix(res.Text, "Error: terminal send aborted") {
		t.Fatalf("aborted send: %+v", res)
	}
	t.Logf("the aborted send settled %s after the cancel", time.Since(start).Round(time.Millisecond))
	if r := c.send(id, "echo again"); r.S["exitCode"] != 0.0 || !strings.Contains(r.Text, "\nagain\n") {
		t.Fatalf("after the aborted send: %q", r.Text)
	}
}

func firstSession(p *inproc) *mcp.ServerSession {
	for ss := range p.srv.mcp.Sessions() {
		return ss
	}
	return nil
}

func mustRaw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
