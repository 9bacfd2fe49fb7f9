package main

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
	var got atomic.Int32
	ct, st := mcp.NewInMemoryTransports()
	ctx := testkit.Ctx(t)
	if _, err := p.srv.mcp.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "tok-1" {
				got.Add(1)
			}
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c := &client{t: t, cs: cs}
	open := c.call(tools.TerminalOpen, map[string]any{})
	id := open.S["sessionId"].(string)
	c.call(tools.TerminalSend, map[string]any{"sessionId": id, "text": "sleep 0.6", "silence_ms": 20})
	params := &mcp.CallToolParams{Name: tools.TerminalWait, Arguments: map[string]any{"sessionId": id, "timeout_ms": 5000}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("wait: %+v %v", res, err)
	}
	if n := got.Load(); n < 3 {
		t.Fatalf("%d progress notifications during a ~0.6 s wait paced at 50 ms", n)
	}
	before := got.Load()
	c.call(tools.TerminalSend, map[string]any{"sessionId": id, "text": "sleep 0.3; true"})
	if got.Load() != before {
		t.Fatal("progress without a progress token")
	}
}
