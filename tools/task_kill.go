package tools

import (
	"context"

	"github.com/ptyactor/ptyactor/messages"
)

// TaskKill interrupts a background send; it exists unless background
// sends are disabled.
const TaskKill = "task_kill"

// TaskKillValue is task_kill's value.
type TaskKillValue struct {
	TaskID  string    `json:"taskId"`
	Outcome string    `json:"outcome"` // "cancellation-requested" or "already-finished"
	Task    TaskValue `json:"task"`
}

func (t *Toolset) taskKillDef() Definition {
	return Definition{
		Name:        TaskKill,
		Description: "Interrupt a running background terminal send: a real SIGINT goes to the terminal's foreground process group. A finished task is left alone.",
		InputSchema: mustJSON(object(schema{
			"taskId": boundedStr("taskId", "Task id returned by terminal_send with runInBackground."),
			"reason": boundedStr("reason", "Optional reason, for logs."),
		}, "taskId")),
		OutputSchema: mustJSON(schema{
			"type": "object",
			"properties": schema{
				"taskId":  schema{"type": "string"},
				"outcome": schema{"type": "string", "enum": []string{string(messages.TaskCancellationRequested), string(messages.TaskAlreadyFinished)}},
				"task":    taskSchema(),
			},
			"required": []string{"taskId", "outcome", "task"},
		}),
	}
}

func (t *Toolset) taskKill(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := taskArg(a)
	if err != nil {
		return Result{}, err
	}
	reason, err := a.str("reason", false)
	if err != nil {
		return Result{}, err
	}
	outcome, snap, err := t.svc.KillTask(ctx, owner, id)
	if err != nil {
		return Result{}, err
	}
	t.opts.Log.Debug().Str("task", string(id)).Str("reason", reason).Str("outcome", string(outcome)).Msg("task kill")
	return Result{
		Text:       renderKill(id, outcome, snap, t.opts.MaxResultBytes),
		Structured: TaskKillValue{TaskID: string(id), Outcome: string(outcome), Task: NewTaskValue(snap)},
	}, nil
}

func renderKill(id messages.TaskID, outcome messages.TaskKillOutcome, t messages.TaskSnapshot, limit int) string {
	if outcome == messages.TaskCancellationRequested {
		return finalize("requested cancellation of task "+string(id), limit)
	}
	return finalize("task "+string(id)+" had already finished "+statusLine(t), limit)
}
