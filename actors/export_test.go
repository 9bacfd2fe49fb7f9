package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// The tests of this package are in package actors_test, because their
// fixtures (test/testkit) import actors. What they reach inside is here,
// in a test file, so only they see it.

// InjectPanic is the message that makes the actor receiving it panic
// (supervision.go): sent to the service's PID it fails the service, or,
// with owner set, that owner; sent to TasksPID, the tasks registry.
func InjectPanic(owner messages.Owner) any { return &injectPanic{owner: owner} }

// TasksPID is the tasks registry's actor.
func (s *Service) TasksPID() *actor.PID { return s.tasks }

// TasksFootprint is what the tasks registry holds, as its probe answers.
type TasksFootprint struct{ Tasks, Finished, BufferedBytes, Sends, Evicted int }

// ProbeTasks asks the tasks registry for its footprint.
func ProbeTasks(ctx context.Context, s *Service) (TasksFootprint, error) {
	r, err := ask[*tasksProbeReply](ctx, s.sys, s.tasks, &tasksProbe{})
	if err != nil {
		return TasksFootprint{}, err
	}
	return TasksFootprint{Tasks: r.tasks, Finished: r.finished, BufferedBytes: r.bufferedBytes, Sends: r.sends, Evicted: r.evicted}, nil
}

// ShutdownActor drives the service actor's shutdown through the protocol
// and leaves the actor alive, so a test can watch what it refuses after.
func ShutdownActor(ctx context.Context, s *Service) error {
	_, err := ask[*protocol.DisposeOwnerReply](ctx, s.sys, s.pid, &serviceShutdown{})
	return err
}
