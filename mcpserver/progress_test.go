package mcpserver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// A long terminal_wait whose client sent a progress token reports progress
// while it waits (MCP clients reset their call timeout on it); a call
// without a token gets none.
func TestProgressWhileWaiting(t *testing.T) {
	p := newInproc(t, tools.Options{})
	p.srv.progressEvery = 50 * time.Millisecond
	var got, stray atomic.Int32
	flushed := make(chan struct{}, 1)
	ct, st := mcp.NewInMemoryTransports()
	ctx := testkit.Ctx(t)
	ss, err := p.srv.mcp.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			switch r.Params.ProgressToken {
			case "tok-1":
				got.Add(1)
			case "flush":
				flushed <- struct{}{}
			default:
				stray.Add(1)
			}
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	// flush returns once the client handled every notification the server
	// sent before: the client handles notifications one at a time, in
	// order, but apart from the results, so one sent during a call may be
	// handled after the call returned.
	flush := func() {
		t.Helper()
		if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "flush"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-flushed:
		case <-ctx.Done():
			t.Fatal(context.Cause(ctx))
		}
	}
	c := &client{t: t, cs: cs}
	open := c.call(tools.TerminalOpen, map[string]any{})
	id := open.S["sessionId"].(string)
	// The command holds the terminal until the test opens the gate, once
	// it saw the progress it expects: the wait cannot end first.
	gate := newGate(t)
	c.call(tools.TerminalSend, map[string]any{"sessionId": id, "text": "read _ < " + gate, "silenceMs": 20})
	params := &mcp.CallToolParams{Name: tools.TerminalWait, Arguments: map[string]any{"sessionId": id, "timeoutMs": 120000}}
	params.SetProgressToken("tok-1")
	type waited struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan waited, 1)
	go func() {
		res, err := cs.CallTool(ctx, params)
		done <- waited{res, err}
	}()
	testkit.WaitFor(t, 20*time.Second, "3 progress notifications during the wait, paced at 50 ms", func() bool { return got.Load() >= 3 })
	openGate(t, gate)
	w := <-done
	if w.err != nil || w.res.IsError {
		t.Fatalf("wait: %+v %v", w.res, w.err)
	}
	if s, _ := w.res.StructuredContent.(map[string]any); s["waitReason"] != "stdin_read" || s["exitCode"] != 0.0 {
		t.Fatalf("the wait did not end at the prompt after the gate opened: %+v", w.res.StructuredContent)
	}
	flush()
	before := got.Load()
	c.call(tools.TerminalSend, map[string]any{"sessionId": id, "text": "sleep 0.3; true"})
	flush()
	if got.Load() != before || stray.Load() != 0 {
		t.Fatalf("progress without a progress token: %d more for tok-1, %d with another token", got.Load()-before, stray.Load())
	}
}
