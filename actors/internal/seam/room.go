package seam

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// Room is what a room beside the core (the remote client) plugs into a
// service: where the sessions naming a host go, and what it hears of the
// service's owners and its end. A service without a room refuses every
// spawn that names a host with messages.ErrNoHost.
type Room interface {
	// Check says whether a spawn naming host can be placed now, without
	// reserving anything (the service checks it before the spawn's
	// name, as it checks a backend).
	Check(host string) error
	// Place reserves a place on host for one session. adopt, when not
	// nil, is a session the host runs already (a resumed owner's), as the
	// room handed it to the service.
	Place(host string, adopt any) (Place, error)
	// OwnerDisposed: the service disposed owner.
	OwnerDisposed(owner messages.Owner)
	// Close ends the room: called by the service's Shutdown once every
	// owner is disposed, before its actor system stops.
	Close(ctx context.Context) error
}

// Place is one session's reserved place, used by its owner.
type Place interface {
	// ID is the id of the session a place adopts; "" for a new session.
	ID() messages.SessionID
	// Actor makes the actor that serves the session under its owner.
	Actor(spec messages.SpawnSpec, env Env) actor.Actor
	// Release gives the place back: the owner refused the spawn.
	Release()
}

// Env is what a session actor gets from its owner.
type Env struct {
	Config messages.Config
	// Clock is the owner's actors.Clock (seam cannot name the type).
	Clock any
	Log   zerolog.Logger
}
