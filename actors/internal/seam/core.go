package seam

import (
	"context"
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// What package actors lends a session implementation and a room. Package
// actors sets these once, in its init (it imports seam, so seam cannot
// import it); a room's package reaches them after importing actors.
var (
	// Target is the owner and session a session request names; ok is
	// false for any other message (actors/routes.go sessionRequest).
	Target func(m any) (owner messages.Owner, id messages.SessionID, ok bool)
	// Refuse is m's reply when it is refused with err; nil when m is not
	// a request (actors/routes.go refusal).
	Refuse func(m any, err error) any
	// Lookup answers the facade's "which actor serves this session"
	// with self; ok is false for any other message.
	Lookup func(m any, self *actor.PID) (reply any, ok bool)
	// IsWait says whether a send request writes nothing (a wait).
	IsWait func(req messages.SendRequest) bool
	// UnknownSend is the error for a ticket the session does not know.
	UnknownSend func(ticket uint64) error
	// Props builds the props of every ptyactor actor.
	Props func(a actor.Actor) *actor.Props
	// Ask sends msg to pid and waits for one reply; ErrGone when the
	// actor stopped before replying.
	Ask func(ctx context.Context, sys *actor.ActorSystem, pid *actor.PID, msg any) (any, error)
	// CoreOf is what a room needs of a service (an *actors.Service).
	CoreOf func(svc any) *Core
	// Watching is a WatchSession's reply handing out src, the session
	// a viewer reads (an *actors.WatchReply).
	Watching func(src backend.Watchable) any
)

// ErrGone: the addressed actor stopped before answering.
var ErrGone = errors.New("ptyactor: actor stopped before replying")

// Core is a service as a room sees it.
type Core struct {
	Sys *actor.ActorSystem
	Log zerolog.Logger
	// SetRoom installs the service's room; an error if it has one.
	SetRoom func(Room) error
	// Adopt spawns for owner a session a room runs already (adopt goes
	// to Room.Place) and returns its handle (an *actors.Session).
	Adopt func(ctx context.Context, owner messages.Owner, req messages.SpawnRequest, adopt any) (any, error)
	// AwaitSend makes an *actors.SendOp for a send of session id this
	// client did not start.
	AwaitSend func(ctx context.Context, owner messages.Owner, id messages.SessionID, ticket uint64) any
}
