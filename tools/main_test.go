package tools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"go.uber.org/goleak"
)

// The fuzz target runs a Service: no goroutine of it may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// toolCaller calls ts's tools as owner, args as their JSON, each call
// within timeout (and the test's watchdog, testkit.Ctx).
func toolCaller(t *testing.T, ts *Toolset, owner messages.Owner, timeout time.Duration) func(name string, args map[string]any) Result {
	ctx := testkit.Ctx(t)
	return func(name string, args map[string]any) Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return ts.Call(cctx, owner, name, raw)
	}
}

// openTerminal opens a terminal through call (see toolCaller) and returns
// its id; a refusal fails the test.
func openTerminal(t *testing.T, call func(name string, args map[string]any) Result) string {
	t.Helper()
	open := call(TerminalOpen, nil)
	if open.IsError {
		t.Fatal(open.Text)
	}
	return open.Structured.(OpenValue).SessionID
}
