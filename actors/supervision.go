package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// resumeStrategy supervises the two top-level registries, the service and
// the tasks actor. protoactor's default restarts a failed root actor
// quietly, which stops every child: one bad message would tear down every
// owner's terminals. A registry's state stays valid across a failed message
// (each handler mutates it last), so the actor resumes with the next
// message, and the sender of the one that failed is answered with an error
// wrapping messages.ErrTransport instead of waiting for a reply that will
// not come.
type resumeStrategy struct{ log zerolog.Logger }

func (r *resumeStrategy) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	r.log.Error().Str("actor", child.Id).Interface("panic", reason).Msg("actor failed on a message; resuming it")
	answerFailed(sys, message, fmt.Errorf("%w: %s failed: %v", messages.ErrTransport, child.Id, reason))
	sup.ResumeChildren(child)
}

// answerFailed answers the sender of the message an actor failed on, when
// the message is a request whose reply type is known.
func answerFailed(sys *actor.ActorSystem, message any, err error) {
	if _, msg, sender := actor.UnwrapEnvelope(message); sender != nil {
		if reply := protocol.Refuse(msg, err); reply != nil {
			sys.Root.Send(sender, reply)
		}
	}
}

// injectPanic makes the actor that receives it panic: the fault tests use
// it to drive every supervision path of doc.go. Unexported: only this
// package's tests can send it.
type injectPanic struct {
	owner messages.Owner // routes it through the service to this owner, if set
}
