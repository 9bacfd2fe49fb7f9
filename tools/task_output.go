package tools

import (
	"context"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// TaskOutput collects a background send's new output; it exists unless
// background sends are disabled.
const TaskOutput = "task_output"

// TaskOutputValue is task_output's value: the new output and the task.
type TaskOutputValue struct {
	TaskID    string    `json:"taskId"`
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated"`
	Task      TaskValue `json:"task"`
}

func (t *Toolset) taskOutputDef() Definition {
	return Definition{
		Name:        TaskOutput,
		Description: "Get the new output of a background terminal send (only what arrived since the previous call) and its status: running, stopping, completed, killed or failed. With wait, first waits until the task finishes or timeoutMs passes.",
		InputSchema: mustJSON(object(schema{
			"taskId":    boundedStr("taskId", "Task id returned by terminal_send with runInBackground."),
			"wait":      boolProp("Wait for the task to finish (up to timeoutMs) before returning.", true),
			"timeoutMs": intProp("How long to wait, in milliseconds (capped).", 0, int(t.opts.WaitTimeout.Milliseconds())),
		}, "taskId")),
		OutputSchema: mustJSON(schema{
			"type": "object",
			"properties": schema{
				"taskId": schema{"type": "string"}, "text": schema{"type": "string"},
				"truncated": schema{"type": "boolean"}, "task": taskSchema(),
			},
			"required": []string{"taskId", "text", "truncated", "task"},
		}),
	}
}

func (t *Toolset) taskOutput(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := taskArg(a)
	if err != nil {
		return Result{}, err
	}
	wait, err := a.boolean("wait", true)
	if err != nil {
		return Result{}, err
	}
	d := t.opts.WaitTimeout
	ms, err := a.integer("timeoutMs")
	switch {
	case err != nil:
		return Result{}, err
	case ms != nil && *ms < 0:
		return Result{}, messages.InvalidArgument("timeoutMs must be an integer >= 0, got %d", *ms)
	case ms != nil:
		d = time.Duration(*ms) * time.Millisecond
	}
	d = min(d, t.opts.MaxWaitTimeout)
	if !wait {
		d = 0
	}
	out, err := t.svc.TaskOutput(ctx, owner, id, d)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:       renderTaskOutput(out, t.opts.MaxResultBytes),
		Structured: TaskOutputValue{TaskID: string(id), Text: out.Text, Truncated: out.Truncated, Task: NewTaskValue(out.Task)},
	}, nil
}

// deltaMarker flags lost output inside a background task's text.
const deltaMarker = "[output truncated]"

// renderDelta is a task's new output, with "[output truncated]" on its own
// line when output was lost.
func renderDelta(text string, truncated bool) string {
	if !truncated {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + deltaMarker
}

func renderTaskOutput(o messages.TaskOutput, limit int) string {
	body := renderDelta(o.Text, o.Truncated)
	if body == "" {
		body = "(no new output)"
	}
	status := "\n" + statusLine(o.Task)
	if len(body)+len(status) <= limit {
		return body + status
	}
	// Over the limit: tail + Marker + status. A body that already ends
	// with the marker loses it first, so the marker appears once.
	body = strings.TrimSuffix(strings.TrimSuffix(body, deltaMarker), "\n")
	room := limit - len(Marker) - len(status)
	if room < 0 {
		return finalize(body+Marker+status, limit)
	}
	return body[textcut.Tail(body, room):] + Marker + status
}
