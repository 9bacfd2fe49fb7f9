package messages

import "time"

// Background tasks: a send that runs while the caller does something else.
// The runtime keeps them in a task registry; like sessions, a task belongs
// to exactly one owner, and another owner's task id is answered exactly like
// an unknown id.

// TaskID names a background task. The runtime mints it (random, prefixed
// "pty-send-"); callers never choose it.
type TaskID string

// TaskKindSend is the kind of a background send.
const TaskKindSend = "pty-send"

// TaskStatus is where a background task stands.
type TaskStatus string

const (
	// TaskRunning: the send has not settled.
	TaskRunning TaskStatus = "running"
	// TaskStopping: a kill was requested (SIGINT sent); the send has not
	// settled yet.
	TaskStopping TaskStatus = "stopping"
	// TaskCompleted: the send settled (any wait reason).
	TaskCompleted TaskStatus = "completed"
	// TaskKilled: the send settled after a kill was accepted.
	TaskKilled TaskStatus = "killed"
	// TaskFailed: the send was rejected (transport failure, session gone).
	TaskFailed TaskStatus = "failed"
)

// Finished reports whether the status is final.
func (s TaskStatus) Finished() bool {
	return s == TaskCompleted || s == TaskKilled || s == TaskFailed
}

// CodeNoTask: an unknown task id, or another owner's.
const CodeNoTask Code = "NO_TASK"

// ErrNoTask matches every unknown-task refusal with errors.Is.
var ErrNoTask = &Error{CodeNoTask, "unknown task"}

// NoTask is the answer for an unknown id and, deliberately, for another
// owner's id.
func NoTask(id TaskID) *Error { return Errorf(CodeNoTask, "unknown task %s", id) }

// CodeTaskEvicted: the task finished and the registry since freed it (see
// TaskEviction). Distinct from CodeNoTask: the id was real.
const CodeTaskEvicted Code = "TASK_EVICTED"

// ErrTaskEvicted matches every evicted-task refusal with errors.Is.
var ErrTaskEvicted = &Error{CodeTaskEvicted, "task finished and was evicted"}

// TaskEvicted is the answer for a finished task the registry freed.
func TaskEvicted(id TaskID) *Error {
	return Errorf(CodeTaskEvicted, "task %s finished and was evicted (its output is gone)", id)
}

// Bounds on finished tasks. A finished task's output is freed as it is
// read; the task itself is evicted once either bound is passed. The
// registry remembers evicted ids (at most MaxEvictedTaskIDs) to answer
// ErrTaskEvicted rather than ErrNoTask.
const (
	// MaxFinishedTasksPerOwner: beyond it, the owner's oldest finished
	// task (by finish time) is evicted.
	MaxFinishedTasksPerOwner = 64
	// FinishedTaskTTL: a finished task is evicted this long after its last
	// read (or its finish, if it was never read since).
	FinishedTaskTTL = 10 * time.Minute
	// MaxEvictedTaskIDs bounds the remembered evicted ids (oldest
	// forgotten first; a forgotten id is then NO_TASK).
	MaxEvictedTaskIDs = 4096
)

// TaskRequest starts a background send.
type TaskRequest struct {
	Session SessionID
	Send    SendRequest
	// Label describes the task for humans ("<session>: <text>").
	Label string
	// OutputLimitBytes bounds the output the task keeps between two reads
	// (the tail is kept); zero means MaxReadBytes.
	OutputLimitBytes int
}

// TaskSnapshot describes a task.
type TaskSnapshot struct {
	ID      TaskID
	Kind    string // TaskKindSend
	Label   string
	Session SessionID
	Status  TaskStatus
	// Detail explains a final status: "wait: <reason>",
	// "session exited: <code|signal|unknown>", or the failure.
	Detail string
	// Set once the send settled without error.
	WaitReason    WaitReason
	ExitCode      *int
	Reader        string
	SessionStatus *SessionStatus
	StartedAt     time.Time
	FinishedAt    time.Time // zero while the task runs
}

// TaskOutput is output produced since the previous TaskOutput call, and the
// task's status.
type TaskOutput struct {
	Text string
	// Truncated: output was dropped since the previous call (the task's
	// buffer or the send's buffer overflowed).
	Truncated bool
	Task      TaskSnapshot
}

// TaskKillOutcome says what a kill did.
type TaskKillOutcome string

const (
	// TaskCancellationRequested: the send was running; a real SIGINT went to
	// the terminal's foreground group (or unwritten input was dropped).
	TaskCancellationRequested TaskKillOutcome = "cancellation-requested"
	// TaskAlreadyFinished: the task had settled; nothing was signalled.
	TaskAlreadyFinished TaskKillOutcome = "already-finished"
)
