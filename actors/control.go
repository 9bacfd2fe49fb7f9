package actors

import (
	"context"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// Control is a person's hold on a session's input, from TakeControl until
// it is returned, times out idle, or another person takes it: their keys,
// their resizes, their hand-back. Once control moved on, every call fails
// with messages.ErrControlStale and nothing is written.
type Control struct {
	h     *Session
	state messages.Control
}

// TakeControl gives the session's input to a person (req.Person, the
// operator by default). A send in flight settles at once with cause
// taken_over (after a SIGINT to the running command when req.Interrupt);
// the agent's sends, keys, resizes, signals and close are refused with
// messages.ErrControlHeld until the hold ends; reads and waits work. A
// person may take control from another person (their hold goes stale).
func (h *Session) TakeControl(ctx context.Context, req messages.TakeControlRequest) (*Control, error) {
	r, err := askSession[*protocol.ControlReply](ctx, h, &protocol.TakeControl{Owner: h.owner, Session: h.ID(), Request: req})
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return &Control{h: h, state: r.Control}, nil
}

// State is the control this hold began with (its holder, since, epoch).
func (c *Control) State() messages.Control { return c.state }

// Epoch is the hold's epoch.
func (c *Control) Epoch() uint64 { return c.state.Epoch }

// Type writes p to the terminal as the person's input (keys, a paste),
// recorded with the person as its source, after their earlier input; it
// returns once written. It restarts the hold's idle countdown.
func (c *Control) Type(ctx context.Context, p []byte) error {
	r, err := askSession[*protocol.ControlInputReply](ctx, c.h, &protocol.ControlInput{Owner: c.h.owner, Session: c.h.ID(), Epoch: c.state.Epoch, Data: p})
	if err != nil {
		return err
	}
	return r.Err
}

// Resize sets the terminal's size: while a person holds control only
// they resize it.
func (c *Control) Resize(ctx context.Context, rows, cols int) error {
	r, err := askSession[*protocol.ResizeReply](ctx, c.h, &protocol.Resize{Owner: c.h.owner, Session: c.h.ID(), Rows: rows, Cols: cols, ControlEpoch: c.state.Epoch})
	if err != nil {
		return err
	}
	return r.Err
}

// Return hands the input back to the agent and returns what the people
// did meanwhile, which the agent's next result on the session carries.
func (c *Control) Return(ctx context.Context) (messages.Handback, error) {
	r, err := askSession[*protocol.ReturnControlReply](ctx, c.h, &protocol.ReturnControl{Owner: c.h.owner, Session: c.h.ID(), Epoch: c.state.Epoch})
	if err != nil {
		return messages.Handback{}, err
	}
	return r.Handback, r.Err
}
