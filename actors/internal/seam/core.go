package seam

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
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
