package actors

// How a write ended, and what follows it.

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// onWriteDone decides what a finished write leads to: the next step of a
// take-over, a cancel's SIGINT, a failure, or the tiers' next look.
func (a *sendActor) onWriteDone(m *writeDone) {
	if a.in.abandon != nil {
		a.in.abandon()
	}
	if a.take.fence == fenceOwed {
		a.ackFence()
	}
	switch {
	case a.take.stage != takeNone && (m.skipped || errors.Is(m.err, context.Canceled)):
		// The person's take-over abandoned the write: what was written
		// stays, the rest never is.
		a.in.stage = stageDone
		if m.skipped {
			a.in.stage = stageAborted
		}
		a.afterTakeOver()
	case m.skipped:
		a.in.stage = stageAborted
		a.settle("", nil, messages.ErrAbortedBeforeWrite)
	case m.err != nil && a.intr.asked == cancelAsked && errors.Is(m.err, context.Canceled):
		// cancel abandoned the write: some of the input may have reached
		// the program, so it gets the SIGINT a written send gets.
		a.in.stage = stageDone
		if !a.settled() {
			a.interrupt()
		}
	case m.err != nil:
		a.in.stage = stageAborted
		a.settle("", nil, fmt.Errorf("%w: write: %w", messages.ErrTransport, m.err))
	default:
		a.onWritten()
	}
}

// onWritten goes on after input that reached the terminal.
func (a *sendActor) onWritten() {
	a.in.stage = stageDone
	a.ev.lastActivity = a.clock.Now()
	a.armSilence()
	if a.take.stage != takeNone {
		a.afterTakeOver()
		return
	}
	if a.intr.asked == cancelAsked && !a.settled() {
		a.interrupt()
	}
	if a.look.off {
		// No exact tier after all: the rest goes at once.
		a.advance()
	}
	a.probeOnEvent()
}
