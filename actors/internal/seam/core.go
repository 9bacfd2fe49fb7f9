package seam

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
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
	// Watching is a WatchSession's reply handing out src, the session
	// a viewer reads (an *actors.WatchReply).
	Watching func(src backend.Watchable) any
)

// Core is a service as a room sees it. Package actors registers its core on
// the service's actor system as an extension, as protoactor's remote
// registers itself (system.Extensions.Register); a room finds it with
// CoreOf. S and O are the facade's handles, *actors.Session and
// *actors.SendOp, which seam cannot name (actors imports seam).
type Core[S, O any] interface {
	extensions.Extension
	// Log is the service's logger.
	Log() zerolog.Logger
	// SetRoom installs the service's room; an error if it has one.
	SetRoom(Room) error
	// Adopt spawns for owner a session a room runs already (adopt goes
	// to Room.Place) and returns its handle.
	Adopt(ctx context.Context, owner messages.Owner, req messages.SpawnRequest, adopt any) (S, error)
	// AwaitSend makes a send handle for a send of session id this client
	// did not start.
	AwaitSend(ctx context.Context, owner messages.Owner, id messages.SessionID, ticket uint64) O
}

// CoreID is the extension id a service's Core registers under.
var CoreID = extensions.NextExtensionID()

// CoreOf is the Core registered on sys; ok is false when sys is not a
// service's (or its handles are not S and O).
func CoreOf[S, O any](sys *actor.ActorSystem) (c Core[S, O], ok bool) {
	c, ok = sys.Extensions.Get(CoreID).(Core[S, O])
	return c, ok
}
