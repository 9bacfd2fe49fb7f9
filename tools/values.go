package tools

import (
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// Structured values: what Result.Structured holds for each tool, and what
// the output schemas describe. JSON names are the model-facing contract.

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

// OpenValue is terminal_open's value.
type OpenValue struct {
	SessionValue
	Motd string `json:"motd"`
}

// ForegroundSendValue is terminal_send's value for a send that settled.
type ForegroundSendValue struct {
	Kind          string      `json:"kind"` // "foreground"
	SessionID     string      `json:"sessionId"`
	Viewport      string      `json:"viewport"`
	WaitReason    string      `json:"waitReason"`
	Cause         string      `json:"cause,omitempty"` // which condition ended the send
	SessionStatus StatusValue `json:"sessionStatus"`
	Truncated     bool        `json:"truncated"`
	ExitCode      *int        `json:"exitCode,omitempty"` // when the prompt marker settled the send
	Reader        string      `json:"reader,omitempty"`   // the program proven to wait on the terminal
	ElapsedMs     int64       `json:"elapsedMs"`
	// Unwritten counts lines of the text never written: the send ended
	// (deadline, cancel, exit) before their turn; they never will be.
	Unwritten      int    `json:"unwritten,omitempty"`
	FirstUnwritten string `json:"firstUnwritten,omitempty"`
	// Secret: the program waits for a secret (echo off): ask the user.
	Secret bool `json:"secret,omitempty"`
	// SecretURL, with Secret, is a link for the person to type the secret
	// straight into the terminal (Options.SecretLink); the model cannot
	// use it (it needs the person's console login).
	SecretURL string `json:"secretUrl,omitempty"`
	// SecretEntered: a person typed a secret at a prompt since the
	// previous result (the secret is in no result).
	SecretEntered bool `json:"secretEntered,omitempty"`
	// ForeignInput: input nobody sent that waited for the shell at its
	// prompt, discarded before the send (quoted).
	ForeignInput string `json:"foreignInput,omitempty"`
	// Cursor counts the final output lines when it settled; a truncated
	// viewport leaves out final lines [OmittedFrom, OmittedTo).
	Cursor      uint64 `json:"cursor"`
	OmittedFrom uint64 `json:"omittedFrom,omitempty"`
	OmittedTo   uint64 `json:"omittedTo,omitempty"`
	// Seq numbers the send's settle event in the session's record.
	Seq uint64 `json:"seq,omitempty"`
	// Screen: while a full-screen program shows the alternate screen.
	Screen *ScreenValue `json:"screen,omitempty"`
	// Running: what the command left running when it returned to the
	// prompt.
	Running []ProcessValue `json:"running,omitempty"`
	// Handback: on the first result after a person held the terminal,
	// what they did.
	Handback *HandbackValue `json:"handback,omitempty"`
}

// ProcessValue is a process left running in the session.
type ProcessValue struct {
	PID      int    `json:"pid"`
	Command  string `json:"command"`
	Detached bool   `json:"detached"` // it outlives the shell's hangup (nohup, setsid)
}

// BackgroundSendValue is terminal_send's value with runInBackground.
type BackgroundSendValue struct {
	Kind      string `json:"kind"` // "background"
	SessionID string `json:"sessionId"`
	TaskID    string `json:"taskId"`
}

// ReadValue is terminal_read's value.
type ReadValue struct {
	SessionID  string `json:"sessionId"`
	Text       string `json:"text"`
	TotalLines int    `json:"totalLines"`
	LineBegin  int    `json:"lineBegin"`
	LineEnd    int    `json:"lineEnd"`
	Truncated  bool   `json:"truncated"`
	// Cursor reads (and every read): the cursor to read on from, lines no
	// longer retained, and whether more follows.
	Cursor      uint64 `json:"cursor"`
	OmittedFrom uint64 `json:"omittedFrom,omitempty"`
	OmittedTo   uint64 `json:"omittedTo,omitempty"`
	More        bool   `json:"more,omitempty"`
	// Handback: see ForegroundSendValue.Handback.
	Handback *HandbackValue `json:"handback,omitempty"`
}

// SignalValue is terminal_signal's value. Reason says why a signal sent
// was not delivered (Delivered false); it is absent otherwise.
type SignalValue struct {
	SessionID  string `json:"sessionId"`
	Signal     string `json:"signal"`
	Delivered  bool   `json:"delivered"`
	TargetPgid int    `json:"targetPgid"`
	Reason     string `json:"reason,omitempty"`
}

// CloseValue is terminal_close's value: the outcome and the leak report.
type CloseValue struct {
	SessionID string `json:"sessionId"`
	Outcome   string `json:"outcome"` // "closed" or "already-closing"
	Killed    []int  `json:"killed"`
	Survivors []int  `json:"survivors"`
	// Recording is the session's record, where one was written.
	Recording *RecordingValue `json:"recording,omitempty"`
}

// RecordingValue names a closed record and the end of its hash chain,
// which anchors it outside the file (ptyrec verify -expect SHA256).
type RecordingValue struct {
	Path    string `json:"path"`
	Host    string `json:"host"`
	Records uint64 `json:"records"`
	SHA256  string `json:"sha256"`
	// HostPath is the record's path on its host when it was fetched
	// (Options.FetchRecording): Path is then the local copy, or, when
	// the fetch failed, the host's path again, and FetchError says why.
	HostPath   string `json:"hostPath,omitempty"`
	FetchError string `json:"fetchError,omitempty"`
}

// ListValue is terminal_list's value.
type ListValue struct {
	Sessions []SessionValue `json:"sessions"`
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

// TaskOutputValue is task_output's value: the new output and the task.
type TaskOutputValue struct {
	TaskID    string    `json:"taskId"`
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated"`
	Task      TaskValue `json:"task"`
}

// TaskKillValue is task_kill's value.
type TaskKillValue struct {
	TaskID  string    `json:"taskId"`
	Outcome string    `json:"outcome"` // "cancellation-requested" or "already-finished"
	Task    TaskValue `json:"task"`
}

// ScreenValue is a terminal screen.
type ScreenValue struct {
	Rows      []string `json:"rows"`
	CursorRow int      `json:"cursorRow"`
	CursorCol int      `json:"cursorCol"`
	Height    int      `json:"height"`
	Width     int      `json:"width"`
	AltScreen bool     `json:"altScreen"`
	Hash      string   `json:"hash"`
	Seq       uint64   `json:"seq,omitempty"`
}

func screenValue(s *messages.Screen) *ScreenValue {
	if s == nil {
		return nil
	}
	return &ScreenValue{Rows: s.Rows, CursorRow: s.CursorRow, CursorCol: s.CursorCol, Height: s.Height, Width: s.Width, AltScreen: s.AltScreen, Hash: s.Hash, Seq: s.Seq}
}

// MarkValue is terminal_mark's value: the mark's number in the session's
// event stream.
type MarkValue struct {
	SessionID string `json:"sessionId"`
	Label     string `json:"label"`
	Seq       uint64 `json:"seq"`
}

// ScreenToolValue is terminal_screen's and terminal_resize's value.
type ScreenToolValue struct {
	SessionID string       `json:"sessionId"`
	Screen    *ScreenValue `json:"screen"`
}
