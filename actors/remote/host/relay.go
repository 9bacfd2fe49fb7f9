package host

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// relay stands as the sender of one protocol request the gateway sends to
// the runtime on a client's behalf: whatever the runtime answers comes
// back to the gateway's mailbox with the relay, which names the call and
// the client. It is a process, not an actor (as the facade's reply box):
// no goroutine, no future, no timeout. The gateway removes it from the
// registry once the call's last reply went out.
type relay struct {
	gw  *actor.PID
	sys *actor.ActorSystem
	pid *actor.PID

	// Owned by the gateway's mailbox from here on.
	call uint64
	to   *actor.PID // the client's link
	rec  *ownerRec  // nil for an unknown token
	// session: the host session the request names, if any.
	session messages.SessionID
	done    bool

	// OpenOwner: the tokens minted for the owner being opened.
	open          *ownerRec
	token, resume string
	// internal: a dispose of a lost client's owner; nobody is answered.
	internal bool
	// resumed: a ResumeOwner's List of the owner's sessions; token is its
	// new capability token.
	resumed *ownerRec
	// clientSession: a Spawn's client-side id of the session.
	clientSession string

	// StartSend (isStart): the reservation was answered (started); a
	// settlement that overtook it waits in early.
	isStart bool
	started bool
	early   *wire.Reply
}

// relayed is a runtime reply the relay hands to the gateway.
type relayed struct {
	r   *relay
	msg any
}

func (r *relay) SendUserMessage(_ *actor.PID, m any) {
	r.sys.Root.Send(r.gw, &relayed{r: r, msg: actor.UnwrapEnvelopeMessage(m)})
}
func (r *relay) SendSystemMessage(*actor.PID, any) {}
func (r *relay) Stop(*actor.PID)                   {}

var _ actor.Process = (*relay)(nil)
