package actors_test

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	. "github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
)

// A service's core is an extension of its actor system, as protoactor's
// remote is: a room finds it typed by the facade's handles, and finds none
// on a system that is not a service's or under other handle types.
func TestCoreIsAnExtensionOfTheServiceSystem(t *testing.T) {
	svc, _ := newTestService(t)
	c, ok := seam.CoreOf[*Session, *SendOp](svc.System())
	if !ok {
		t.Fatal("no core on the service's actor system")
	}
	if err := c.SetRoom(nil); err != nil {
		t.Fatalf("first room: %v", err)
	}
	if err := c.SetRoom(nil); err == nil {
		t.Fatal("a second room was accepted")
	}
	if _, ok := seam.CoreOf[*Session, *Session](svc.System()); ok {
		t.Fatal("found a core under the wrong handle types")
	}
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	if _, ok := seam.CoreOf[*Session, *SendOp](sys); ok {
		t.Fatal("found a core on a bare actor system")
	}
}
