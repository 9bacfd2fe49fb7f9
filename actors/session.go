package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/takeover"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// sessionActor owns one terminal: the one-send slot, the close fence,
// the status, and the backend session; who holds its input is its
// take-over (control). While starting it is the pending spawn; once its
// startup settles it becomes the published session. Its messages are
// routed by sessionRoutes (session_routes.go) to handlers named for them:
// the startup (session_start.go), the slot (session_send.go), the close
// (session_close.go), the take-over's side (session_control.go).
type sessionActor struct {
	id      messages.SessionID
	owner   messages.Owner
	spec    messages.SpawnSpec
	backend backend.Backend
	// spawnCancel ends the context the backend's Spawn runs under (the
	// session's own: cancellation reaches it as a seam.CancelSpawn message);
	// spawnErr is the cause once cancelled.
	spawnCancel context.CancelCauseFunc
	spawnErr    error
	cfg         messages.Config
	clock       Clock
	log         zerolog.Logger

	self, ownerPID *actor.PID
	sys            *actor.ActorSystem

	bs     backend.Session
	phase  actorkit.Phase
	status messages.SessionStatus

	// factsPID holds the session's readiness facts and runs the exact
	// tier's looks; the backend reports to it, sends subscribe to it.
	factsPID *actor.PID

	// The one-send slot. A send occupies it from reservation until its
	// actor stops (settled and drained).
	sendPID     *actor.PID
	sendTicket  uint64
	sendStartup bool
	sendIsWait  bool // the current send writes nothing (a wait)
	sendSettled bool // the current send settled; its write or SIGINT is still in flight
	// queuedStarts wait for a settled send to drain: the slot is only
	// technically busy (a late write or signal must not reach the next
	// send), so a caller is not told SEND_ACTIVE for it.
	queuedStarts []queuedStart
	subscribers  []*actor.PID // waiters handed to the current send (told by the session only if it fails)
	nextTicket   uint64
	last         *protocol.SendSettled // the most recent settled send
	secretPrompt bool                  // it settled at a secret prompt, and no send started since
	// control is who holds the input: the agent, or a person who took
	// it over (its epochs, the fence, the hand-back).
	control *takeover.Takeover
	// secretEntered: a person entered a secret since the agent's last
	// result (the next one says so).
	secretEntered bool

	// Close fence: one attempt at a time; failures are not cached.
	closeAttempt uint64
	closeReason  string
	closeWaiters []actorkit.CloseWaiter
	startupErr   error // set when the close is the rollback of a failed startup
	finishing    bool  // the poison pill is on its way
}

type queuedStart struct {
	msg    *protocol.StartSend
	sender *actor.PID
}

// current is the ticket of the send in the slot (0: none).
func (s *sessionActor) current() uint64 {
	if s.sendPID == nil {
		return 0
	}
	return s.sendTicket
}

// agentSendRunning reports an agent's send (not the startup wait) in the
// slot that has not settled: a note for the agent's next result goes to
// it.
func (s *sessionActor) agentSendRunning() bool {
	return s.sendPID != nil && !s.sendStartup && !s.sendSettled
}

func (s *sessionActor) snapshot() messages.Snapshot {
	snap := messages.Snapshot{SessionID: s.id, Name: s.spec.Name, Type: s.spec.Type, Status: s.status, SecretPrompt: s.secretPrompt, Control: s.control.State()}
	if s.bs != nil {
		snap.PID = s.bs.PID()
	}
	return snap
}

// maybeFinish retires a closed session once its send settled and drained.
// A poison pill, not Stop: requests the owner forwarded before it dropped
// the session are still answered (as closing).
func (s *sessionActor) maybeFinish(ctx actor.Context) {
	if s.phase == actorkit.PhaseClosed && s.sendPID == nil && !s.finishing {
		s.finishing = true
		ctx.Poison(s.self)
	}
}

// endSend stops the failed send's collection. The backend may be what
// failed (a panic in the very call the send made at its settlement): a
// second panic here must not take the session down with its send.
func (s *sessionActor) endSend() {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Str("session", string(s.id)).Interface("panic", r).Msg("backend EndSend failed")
		}
	}()
	s.bs.EndSend()
}
