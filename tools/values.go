package tools

import (
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// Structured values several tools share (sessions, statuses, tasks);
// each tool's own value is in its file. What Result.Structured holds and
// the output schemas describe: JSON names are the model-facing contract.

// StatusValue is a session status: {"kind":"running"}, or
// {"kind":"exited","exitCode":n,"signal":"SIG..."} with the fields known.
type StatusValue struct {
	Kind     string `json:"kind"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

func statusValue(s messages.SessionStatus) StatusValue {
	if !s.Exited {
		return StatusValue{Kind: "running"}
	}
	return StatusValue{Kind: "exited", ExitCode: s.ExitCode, Signal: s.Signal}
}

// SessionValue describes a session (terminal_list entries).
type SessionValue struct {
	SessionID string      `json:"sessionId"`
	Name      string      `json:"name,omitempty"`
	Type      string      `json:"type"`
	PID       int         `json:"pid,omitempty"`
	Status    StatusValue `json:"status"`
}

func sessionValue(s messages.Snapshot) SessionValue {
	return SessionValue{SessionID: string(s.SessionID), Name: s.Name, Type: s.Type, PID: s.PID, Status: statusValue(s.Status)}
}

// TaskValue describes a background task: in task_output's and task_kill's
// values, and as the content of ptymcp's task resource.
type TaskValue struct {
	ID            string       `json:"id"`
	Kind          string       `json:"kind"`
	Label         string       `json:"label"`
	SessionID     string       `json:"sessionId"`
	Status        string       `json:"status"`
	Detail        string       `json:"detail,omitempty"`
	WaitReason    string       `json:"waitReason,omitempty"`
	ExitCode      *int         `json:"exitCode,omitempty"`
	Reader        string       `json:"reader,omitempty"`
	SessionStatus *StatusValue `json:"sessionStatus,omitempty"`
	StartedAt     string       `json:"startedAt"`
	FinishedAt    string       `json:"finishedAt,omitempty"`
}

// NewTaskValue is the value describing a task.
func NewTaskValue(t messages.TaskSnapshot) TaskValue {
	v := TaskValue{
		ID: string(t.ID), Kind: t.Kind, Label: t.Label, SessionID: string(t.Session), Status: string(t.Status),
		Detail: t.Detail, WaitReason: string(t.WaitReason), ExitCode: t.ExitCode, Reader: t.Reader,
		StartedAt: t.StartedAt.UTC().Format(time.RFC3339Nano),
	}
	if t.SessionStatus != nil {
		s := statusValue(*t.SessionStatus)
		v.SessionStatus = &s
	}
	if !t.FinishedAt.IsZero() {
		v.FinishedAt = t.FinishedAt.UTC().Format(time.RFC3339Nano)
	}
	return v
}
