package actorkit

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

type ping struct{ n int }

type echo struct{ table Table[*echo] }

func (e *echo) Receive(ctx actor.Context) {
	if !e.table.Dispatch(e, ctx) {
		if _, ok := ctx.Message().(string); ok {
			ctx.Respond("unrouted")
		}
	}
}

// A table hands each message to the handler of its type, and tells its
// actor about a message it does not route.
func TestTableRoutes(t *testing.T) {
	tab := Table[*echo]{}
	On(tab, func(_ *echo, ctx actor.Context, m *ping) { ctx.Respond(m.n + 1) })
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	pid := sys.Root.Spawn(Props(&echo{table: tab}))
	defer sys.Root.Stop(pid)
	for msg, want := range map[any]any{&ping{n: 41}: 42, "hello": "unrouted"} {
		got, err := sys.Root.RequestFuture(pid, msg, 10*time.Second).Result()
		if err != nil || got != want {
			t.Fatalf("%T: got %v, %v; want %v", msg, got, err, want)
		}
	}
}

// A type routed twice is a mistake caught as the table is built.
func TestTableRoutedTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a type routed twice")
		}
	}()
	tab := Table[*echo]{}
	On(tab, func(*echo, actor.Context, *ping) {})
	On(tab, func(*echo, actor.Context, *ping) {})
}
