package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
)

// A user scripts the faults their integration must survive: here, the
// first close of a session fails (a process survived the teardown) and the
// retry succeeds, and the first write after that blocks until the caller
// gives up.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	svc, _ := actors.NewService(actors.Options{})
	defer svc.Shutdown(ctx)

	b := faulty.New("shell")
	svc.RegisterBackend(ctx, b)
	owner, _ := svc.NewOwner(ctx, "agent")
	s, _ := svc.Spawn(ctx, owner, messages.SpawnRequest{})

	busy := errors.New("device busy")
	b.Script(faulty.OpClose, faulty.Fail(busy))
	_, err := svc.Session(owner, s.ID()).Close(ctx, "done")
	var ce *messages.CleanupError
	fmt.Println("first kill:", errors.As(err, &ce), errors.Is(err, busy))
	rep, err := svc.Session(owner, s.ID()).Close(ctx, "retry")
	closed := !rep.Joined
	fmt.Println("second kill:", closed, err)

	s, _ = svc.Spawn(ctx, owner, messages.SpawnRequest{})
	b.Script(faulty.OpWrite, faulty.Hang())
	gaveUp := errors.New("agent gave up")
	sendCtx, stop := context.WithCancelCause(ctx)
	go func() {
		b.Entered(ctx, faulty.OpWrite, 1) // the write is blocked now
		stop(gaveUp)
	}()
	_, err = svc.Session(owner, s.ID()).Send(sendCtx, messages.SendRequest{Text: "cat big.log", Submit: true})
	fmt.Println("send:", err)
	// Output:
	// first kill: true true
	// second kill: true <nil>
	// send: agent gave up
}
