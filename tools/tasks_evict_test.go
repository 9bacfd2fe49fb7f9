package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// task_output for a finished task evicted after FinishedTaskTTL says so,
// with TASK_EVICTED; an unknown id stays "unknown task".
func TestTaskOutputEvicted(t *testing.T) {
	clk := &testkit.OffsetClock{}
	svc := testkit.Service(t, testkit.ServiceOptions{Config: messages.DefaultConfig(), Clock: clk, Backends: []backend.Backend{echoBackend{}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := New(svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := testkit.Owner(t, svc, "agent")
	sp, err := svc.Spawn(ctx, owner, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.Call(ctx, owner, TerminalSend, []byte(`{"sessionId":"`+string(sp.ID())+`","text":"hi","runInBackground":true}`))
	bg, ok := r.Structured.(BackgroundSendValue)
	if r.IsError || !ok {
		t.Fatalf("background send: %q (%v)", r.Text, r.Err)
	}
	r = ts.Call(ctx, owner, TaskOutput, []byte(`{"taskId":"`+bg.TaskID+`"}`))
	if out, ok := r.Structured.(TaskOutputValue); r.IsError || !ok || out.Task.Status != string(messages.TaskCompleted) {
		t.Fatalf("task_output: %q (%v)", r.Text, r.Err)
	}
	clk.Advance(messages.FinishedTaskTTL)
	r = ts.Call(ctx, owner, TaskOutput, []byte(`{"taskId":"`+bg.TaskID+`"}`))
	if !r.IsError || !errors.Is(r.Err, messages.ErrTaskEvicted) || errors.Is(r.Err, messages.ErrNoTask) ||
		!strings.Contains(r.Text, "finished and was evicted") || !strings.Contains(r.Text, bg.TaskID) {
		t.Fatalf("evicted task_output: %q (%v)", r.Text, r.Err)
	}
	r = ts.Call(ctx, owner, TaskOutput, []byte(`{"taskId":"pty-send-nope","wait":false}`))
	if !errors.Is(r.Err, messages.ErrNoTask) || strings.Contains(r.Text, "evicted") {
		t.Fatalf("unknown task_output: %q (%v)", r.Text, r.Err)
	}
}
