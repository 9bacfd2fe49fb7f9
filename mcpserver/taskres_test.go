package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// A background task is a resource its client can subscribe to: the server
// says when it finishes (notifications/resources/updated), and reading the
// resource gives its status; another client's session cannot subscribe to
// it.
func TestTaskResourceUpdated(t *testing.T) {
	p := newInproc(t, tools.Options{})
	ctx := testkit.Ctx(t)
	updated := make(chan string, 4)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := p.srv.mcp.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	mc := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	// Under the current protocol Subscribe only opens a background
	// subscriptions/listen stream and returns; the subscription holds
	// once the server acknowledges it (notifications/subscriptions/
	// acknowledged, naming the resources it accepted).
	acked := make(chan []string, 4)
	mc.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if a, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && a != nil {
				acked <- a.Notifications.ResourceSubscriptions
			}
			return next(ctx, method, req)
		}
	})
	cs, err := mc.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c := &client{t: t, cs: cs}
	id := c.call(tools.TerminalOpen, map[string]any{}).S["sessionId"].(string)
	// The task waits at a gate the test opens once its subscription holds
	// (and it checked the other client): it cannot finish, and send its
	// one notification, before. until prompt: silence does not end it while
	// it waits.
	gate := newGate(t)
	bg := c.call(tools.TerminalSend, map[string]any{"sessionId": id, "text": "read _ < " + gate + "; echo finished", "runInBackground": true, "until": "prompt"})
	uri := taskURIPrefix + bg.S["taskId"].(string)
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	select {
	case got := <-acked:
		if !slices.Equal(got, []string{uri}) {
			t.Fatalf("subscription acknowledged for %q, want [%s]", got, uri)
		}
	case <-ctx.Done():
		t.Fatal("the server did not acknowledge the subscription")
	}
	// Another client's session cannot read it (its subscription, under
	// the current protocol a background stream, is refused on the server).
	other := p.client()
	if _, err := other.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatal("another client read this client's task")
	}
	openGate(t, gate)
	select {
	case got := <-updated:
		if got != uri {
			t.Fatalf("updated %q, want %q", got, uri)
		}
	case <-ctx.Done():
		t.Fatal("no notification when the task finished")
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"status":"completed"`) {
		t.Fatalf("read: %+v %v", res, err)
	}
	// The content is the task value task_output returns: one shape.
	var v tools.TaskValue
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &v); err != nil || v.ID != bg.S["taskId"] || v.SessionID != id || v.StartedAt == "" {
		t.Fatalf("resource %s, %v: not the task's tools.TaskValue", res.Contents[0].Text, err)
	}
}
