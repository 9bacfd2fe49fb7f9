package protocol

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// The service actor's request/reply protocol. An integration may drive the
// runtime with these messages instead of the Go facade: send a request to the
// service PID (actors.Service.PID) with Request/RequestFuture and await the
// reply type named on each request. Every reply carries Err; a refusal never
// panics or drops.

// RegisterBackend adds a backend. Reply: *RegisterBackendReply.
type RegisterBackend struct{ Backend backend.Backend }

// RegisterBackendReply answers RegisterBackend.
type RegisterBackendReply struct{ Err error }

// UnregisterBackend removes a backend type; its sessions survive. Reply:
// *UnregisterBackendReply.
type UnregisterBackend struct{ Type string }

// UnregisterBackendReply answers UnregisterBackend.
type UnregisterBackendReply struct{ Removed bool }

// ListBackends asks for the registered types in registration order. Reply:
// *ListBackendsReply.
type ListBackends struct{}

// ListBackendsReply answers ListBackends.
type ListBackendsReply struct{ Types []string }

// OpenOwner makes an owner live. Reply: *OpenOwnerReply.
type OpenOwner struct{ Owner messages.Owner }

// OpenOwnerReply answers OpenOwner.
type OpenOwnerReply struct{ Err error }

// Spawn starts a session for Owner. Reply: *SpawnReply, after the session is
// published or the spawn failed and was rolled back. Ref (optional, unique
// among the owner's pending spawns) names the spawn for CancelSpawn.
// Cancelled, when set, refuses the spawn with exactly that error before
// anything starts (a caller that gave up before sending).
type Spawn struct {
	Owner     messages.Owner
	Request   messages.SpawnRequest
	Ref       string
	Cancelled error

	// Adopt is set by a room beside the core only (actors/remote): a
	// session a host runs already, handed to the room's Place.
	Adopt any
}

// CancelSpawn cancels a pending spawn: its reply then carries Cause exactly
// (context.Canceled when nil), once the backend has stopped what it
// started. A spawn already answered is not affected. No reply.
type CancelSpawn struct {
	Owner messages.Owner
	Ref   string
	Cause error
}

// SpawnReply answers Spawn.
type SpawnReply struct {
	Result messages.SpawnResult
	Err    error
}

// HasOwnerActivity asks whether Owner has a pending spawn or an open session.
// Reply: *HasOwnerActivityReply.
type HasOwnerActivity struct{ Owner messages.Owner }

// HasOwnerActivityReply answers HasOwnerActivity. Failures holds retained
// cleanup failures that a later dispose will report.
type HasOwnerActivityReply struct {
	Active   bool
	Failures int
}

// StartSend reserves the session's one send slot and writes the input.
// Reply: *StartSendReply as soon as the slot is reserved (or refused). With
// NotifySettled, the sender also receives *SendSettled when the send settles.
type StartSend struct {
	Owner         messages.Owner
	Session       messages.SessionID
	Request       messages.SendRequest
	NotifySettled bool
}

// StartSendReply answers StartSend. Ticket names the send for AwaitSend,
// ReadSendOutput and CancelSend.
type StartSendReply struct {
	Ticket uint64
	Err    error
}

// SendSettled is the final result of a send.
type SendSettled struct {
	Session messages.SessionID
	Ticket  uint64
	Result  messages.SendResult
	Err     error
}

// AwaitSend asks for the final result of a send. Reply: *SendSettled, when it
// settles (at once if it already has).
type AwaitSend struct {
	Owner   messages.Owner
	Session messages.SessionID
	Ticket  uint64
}

// ReadSendOutput returns output produced since the previous call. Reply:
// *ReadSendOutputReply.
type ReadSendOutput struct {
	Owner   messages.Owner
	Session messages.SessionID
	Ticket  uint64
}

// ReadSendOutputReply answers ReadSendOutput.
type ReadSendOutputReply struct {
	Read    messages.SendRead
	Settled bool
	Err     error
}

// CancelSend requests cancellation: input not yet written is never written;
// otherwise a real SIGINT goes to the foreground group. Reply:
// *CancelSendReply.
type CancelSend struct {
	Owner   messages.Owner
	Session messages.SessionID
	Ticket  uint64
}

// CancelSendReply answers CancelSend; Accepted is false once settled.
type CancelSendReply struct{ Accepted bool }

// Read pages scrollback. Reply: *ReadReply.
type Read struct {
	Owner   messages.Owner
	Session messages.SessionID
	Request messages.ReadRequest
}

// ReadReply answers Read.
type ReadReply struct {
	Result messages.ReadResult
	Err    error
}

// SignalSession signals the terminal's foreground group. Reply: *SignalReply.
type SignalSession struct {
	Owner   messages.Owner
	Session messages.SessionID
	Signal  messages.Signal
}

// SignalReply answers SignalSession.
type SignalReply struct {
	Result messages.SignalResult
	Err    error
}

// Kill closes a session. Reply: *KillReply once the close finished. A kill
// that finds a close in flight joins it and reports Closed false.
type Kill struct {
	Owner   messages.Owner
	Session messages.SessionID
	Reason  string // default "model request"
}

// KillReply answers Kill.
type KillReply struct {
	Closed bool
	Report messages.CloseReport
	Err    error
}

// Describe asks for one session's snapshot (its status now). Reply:
// *DescribeReply.
type Describe struct {
	Owner   messages.Owner
	Session messages.SessionID
}

// DescribeReply answers Describe.
type DescribeReply struct {
	Snapshot messages.Snapshot
	Err      error
}

// GetScreen asks for a session's screen now. Reply: *ScreenReply.
type GetScreen struct {
	Owner   messages.Owner
	Session messages.SessionID
}

// ScreenReply answers GetScreen.
type ScreenReply struct {
	Screen messages.Screen
	Err    error
}

// Resize sets a session's terminal size. Reply: *ResizeReply. While a
// person holds the session's input only they resize it: ControlEpoch is
// their hold's epoch (zero: the agent's resize, refused then).
type Resize struct {
	Owner        messages.Owner
	Session      messages.SessionID
	Rows, Cols   int
	ControlEpoch uint64
}

// TakeControl gives a session's input to a person: a send in flight
// settles at once with cause taken_over, and the agent's input is
// refused (ErrControlHeld) until ReturnControl. Reply: *ControlReply.
type TakeControl struct {
	Owner   messages.Owner
	Session messages.SessionID
	Request messages.TakeControlRequest
}

// ControlReply answers TakeControl with the new control state.
type ControlReply struct {
	Control messages.Control
	Err     error
}

// ControlInput is input a person types while holding control of epoch
// Epoch: written in order, and refused (ErrControlStale) once control
// moved on. Reply: *ControlInputReply, once written.
type ControlInput struct {
	Owner   messages.Owner
	Session messages.SessionID
	Epoch   uint64
	Data    []byte
}

// ControlInputReply answers ControlInput.
type ControlInputReply struct{ Err error }

// ReturnControl hands a session's input back to the agent from the hold
// of epoch Epoch. Reply: *ReturnControlReply, with the summary the
// agent's next result carries.
type ReturnControl struct {
	Owner   messages.Owner
	Session messages.SessionID
	Epoch   uint64
}

// ReturnControlReply answers ReturnControl.
type ReturnControlReply struct {
	Handback messages.Handback
	Err      error
}

// ResizeReply answers Resize.
type ResizeReply struct{ Err error }

// Mark puts a label in the session's event stream (and so its record):
// "tests start". Reply: *MarkReply.
type Mark struct {
	Owner   messages.Owner
	Session messages.SessionID
	Label   string
}

// MarkReply answers Mark with the mark's number in the stream.
type MarkReply struct {
	Seq uint64
	Err error
}

// ListOwners asks for the service's live owners. Reply: *ListOwnersReply.
type ListOwners struct{}

// ListOwnersReply answers ListOwners, sorted.
type ListOwnersReply struct{ Owners []messages.Owner }

// WatchSession asks for what a person watching the session reads: its
// event stream and its picture. Reply: *WatchReply. Session.Watch is
// its handle.
type WatchSession struct {
	Owner   messages.Owner
	Session messages.SessionID
	// Since is where the viewer starts (0: from a picture). A local
	// session's stream keeps every viewer's place; a session on a host
	// uses it to start the events it mirrors there.
	Since uint64
}

// WatchReply answers WatchSession: the session's stream, read by the
// viewer itself (never through the session's mailbox).
type WatchReply struct {
	// Source is what the viewer reads; nil when Err is set.
	Source backend.Watchable
	Err    error
}

// LookupSession asks which actor serves a published session: the facade's
// route cache sends its session requests there directly. Reply:
// *LookupReply.
type LookupSession struct {
	Owner   messages.Owner
	Session messages.SessionID
}

// LookupReply answers LookupSession; PID is nil when there is no such
// session.
type LookupReply struct{ PID *actor.PID }

// List asks for the owner's published sessions in publication order. Reply:
// *ListReply.
type List struct{ Owner messages.Owner }

// ListReply answers List.
type ListReply struct{ Sessions []messages.Snapshot }

// DisposeOwner closes the owner's registration, cancels its pending spawns,
// closes every session and replies when all are quiet. Reply:
// *DisposeOwnerReply.
type DisposeOwner struct{ Owner messages.Owner }

// DisposeOwnerReply answers DisposeOwner; Err joins every cleanup failure,
// including ones retained from earlier.
type DisposeOwnerReply struct{ Err error }

// Lifecycle events, published on the actor system's event stream. They never
// carry terminal bytes.

// EventSessionOpened: a session was published.
type EventSessionOpened struct {
	Owner    messages.Owner
	Snapshot messages.Snapshot
}

// EventSendSettled: a send settled.
type EventSendSettled struct {
	Owner      messages.Owner
	Session    messages.SessionID
	Ticket     uint64
	WaitReason messages.WaitReason
	Cause      messages.Cause
	ExitCode   *int
	Reader     string // the program proven to wait on the terminal
	Secret     bool   // it waits for a secret
	Cursor     uint64 // final output lines when it settled
	Seq        uint64 // its settle event's number in the session's stream
	Err        error
}

// EventSessionExited: the shell exited.
type EventSessionExited struct {
	Owner   messages.Owner
	Session messages.SessionID
	Status  messages.SessionStatus
}

// EventSessionClosed: a close finished and the tree is quiet.
type EventSessionClosed struct {
	Owner   messages.Owner
	Session messages.SessionID
	Reason  string
	Report  messages.CloseReport
}

// EventControlChanged: a session's input changed hands; Handback is set
// when it came back to the agent.
type EventControlChanged struct {
	Owner    messages.Owner
	Session  messages.SessionID
	Control  messages.Control
	Handback *messages.Handback
}

// EventCleanupFailed: a close left survivors or failed.
type EventCleanupFailed struct {
	Owner   messages.Owner
	Session messages.SessionID
	Err     error
}
