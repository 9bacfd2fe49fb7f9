package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
)

// replyBox delivers replies into a channel (actorkit.Box).
type replyBox = actorkit.Box

func newReplyBox(sys *actor.ActorSystem, capacity int) *replyBox {
	return actorkit.NewBox(sys, capacity)
}

// errGone: the addressed actor stopped before answering (its session or
// owner went away in between). Callers translate it to the right refusal.
var errGone = actorkit.ErrGone

// ask sends msg to pid and waits for one reply of type R.
func ask[R any](ctx context.Context, sys *actor.ActorSystem, pid *actor.PID, msg any) (R, error) {
	return actorkit.Ask[R](ctx, sys, pid, msg)
}

// props builds the props of every ptyactor actor (actorkit.Props).
func props(a actor.Actor) *actor.Props { return actorkit.Props(a) }
