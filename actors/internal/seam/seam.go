// Package seam is the contract between an owner actor and the actor that
// serves one of its sessions, for session implementations outside package
// actors (the remote proxy in actors/remote): the owner's requests to it
// and its reports to the owner. With the session requests of
// actors/protocol (StartSend, AwaitSend, ..., Resize) it is everything an
// owner and a session actor say to each other (ARCHITECTURE.md, "The
// remote room and its seam"). Core is what a room sees of the service it
// joins, found on the service's actor system (CoreOf).
package seam

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/messages"
)

// Owner → session.
type (
	// CancelSpawn stops the start; the spawn fails with Cause.
	CancelSpawn struct{ Cause error }
	// CloseSession closes the session; the owner hears Closed or
	// CloseFailed.
	CloseSession struct{ Reason string }
)

// Session → owner.
type (
	// Started: the session is up; the owner publishes it.
	Started struct {
		ID     messages.SessionID
		Result messages.SpawnResult
	}
	// StartFailed: the start failed and was rolled back.
	StartFailed struct {
		ID  messages.SessionID
		Err error
		// Kept: the startup's rollback close failed and the session
		// actor stays, holding the backend session, so a dispose can
		// retry the close.
		Kept bool
	}
	// StatusChanged: the session's status changed (it exited).
	StatusChanged struct {
		ID     messages.SessionID
		Status messages.SessionStatus
	}
	// Closed: the session is closed and its actor may stop.
	Closed struct {
		ID     messages.SessionID
		Report messages.CloseReport
		// Replies to send once the owner dropped the record, so a List
		// right after Kill returns no longer shows the session.
		Replies []CloseReply
	}
	// CloseFailed: a close failed; the session stays for a retry.
	CloseFailed struct {
		ID  messages.SessionID
		Err error
	}
	// OrphanClosed: a session actor that stopped without a close tore
	// its tree down from its Stopping handler.
	OrphanClosed struct {
		ID  messages.SessionID
		Err error
	}
)

// CloseReply is a Kill's answer (an *actors.KillReply), delivered by the
// owner.
type CloseReply struct {
	To    *actor.PID
	Reply any
}
