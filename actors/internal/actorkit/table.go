package actorkit

import (
	"reflect"

	"github.com/asynkron/protoactor-go/actor"
)

// Table routes an actor's messages by their type to its named handlers,
// so its Receive is one lookup and every handler reads as a method. It is
// built once per actor type (a package variable), never per message.
type Table[A any] map[reflect.Type]func(a A, ctx actor.Context)

// On routes messages of type M (a pointer type, as sent) to h. A type
// routed twice is a mistake in the table: it panics as the table is
// built, not when the message arrives.
func On[M any, A any](t Table[A], h func(a A, ctx actor.Context, m M)) {
	k := reflect.TypeFor[M]()
	if _, twice := t[k]; twice {
		panic("actorkit: " + k.String() + " routed twice")
	}
	t[k] = func(a A, ctx actor.Context) { h(a, ctx, ctx.Message().(M)) }
}

// Dispatch runs the handler of ctx's message; false when t has none.
func (t Table[A]) Dispatch(a A, ctx actor.Context) bool {
	h, ok := t[reflect.TypeOf(ctx.Message())]
	if ok {
		h(a, ctx)
	}
	return ok
}
