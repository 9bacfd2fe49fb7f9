package actors

import (
	"github.com/ptyactor/ptyactor/actors/internal/takeover"
	"github.com/ptyactor/ptyactor/messages"
)

// A hand-back's summary goes to the agent's next result: the send in
// flight at the hand-back (a wait) when there is one.

type (
	// handbackNote: session → the send in flight at a hand-back, whose
	// result is the agent's next one; handbackBounced: send → session,
	// it had settled already (the next result takes it).
	handbackNote    struct{ hb *messages.Handback }
	handbackBounced struct{ hb *messages.Handback }
)

// joinPending adds hb to the summary the agent has not been told yet.
func joinPending(pending, hb *messages.Handback) *messages.Handback {
	return takeover.Join(pending, hb)
}
