package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// Messages that stay inside the actor tree.

// service → owner: a spawn that passed the service's checks.
type ownerSpawn struct {
	msg     *protocol.Spawn
	backend backend.Backend
	id      messages.SessionID
	// place, when set, is the session's place in the service's room (a
	// remote host, reserved already); backend is then nil.
	place seam.Place
}

// service → owner: the service is disposing; the owner disposes itself.
type ownerShutdown struct{}

// owner → service: the owner finished disposing and is stopping.
type ownerGone struct{ owner messages.Owner }

// session goroutine → session.
type (
	backendSpawned struct {
		bs  backend.Session
		err error
	}
	closeDone struct {
		attempt uint64
		report  messages.CloseReport
		err     error
	}
)

// session → owner, owner → session: package seam (actors/internal/seam).
// Its reports and requests, and the session requests of actors/protocol/routes.go, are the
// whole contract between an owner and the actor that serves one of its
// sessions: a proxy for a session whose actor tree runs on another machine
// serves it by speaking the same (see ARCHITECTURE.md, "Where remote hosts
// plug in").

// send → session.
type sendFinished struct {
	// notify lists waiters the session must tell itself (the send actor
	// failed before it could). Carried here because the failed actor's
	// Terminated, a system message, reaches the session first and frees
	// the slot with its subscriber list.
	notify []*actor.PID
	ticket uint64
	result messages.SendResult
	err    error
	// draining: a write or interrupt is still in flight; the slot stays
	// taken until the send actor stops, so the next send sees no late
	// bytes or signals.
	draining bool
}

// send → session: a send that settled while draining has nothing in flight
// any more; the session may retire it.
type sendDrained struct{ ticket uint64 }

// session → send.
type forceSettle struct {
	reason messages.WaitReason
	status *messages.SessionStatus // the session's status now, when known
}

// session → send: the session is closing; readiness stops until the
// teardown settles the send as session_exit.
type freeze struct{}

// send goroutines / timers → send.
type (
	writeDone struct {
		err     error
		skipped bool
	}
	// foreignCleared: the shell took the foreign input a send's start
	// found it reading (awaitClear).
	foreignCleared struct {
		foreign   string // discarded meanwhile
		keys      []byte // the erasure, to write first
		timedOut  bool   // the shell never showed it waits: no erasure
		abandoned bool   // cancelled or settled meanwhile: nothing is written
	}
	interruptDone struct {
		pgid int // the group the SIGINT reached
		err  error
	}
	timerFired struct {
		kind timerKind
		gen  uint64
	}
)

type timerKind int

const (
	timerDeadline timerKind = iota
	timerSilence
	timerPoll
	timerProbe
	timerTakeOver
	timerKinds
)
