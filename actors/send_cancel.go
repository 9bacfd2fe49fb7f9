package actors

import (
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// onCancel requests cancellation. Input that was not yet written never is;
// otherwise a real SIGINT goes to the foreground group once the write
// settled. The send then settles through the normal tiers.
func (a *sendActor) onCancel() bool {
	if a.settled() || a.intr.asked == cancelAsked {
		return !a.settled()
	}
	a.intr.asked = cancelAsked
	if a.in.gate.CompareAndSwap(gateOpen, gateClosed) {
		if a.in.stage != stageInFlight {
			a.settle("", nil, messages.ErrAbortedBeforeWrite)
		}
		// Otherwise the write goroutine finds the gate closed and reports
		// the skip.
		return true
	}
	if a.in.stage == stageInFlight {
		// The rest of the input is abandoned; the write reports, and the
		// interrupt follows in onWriteDone, as for a completed write.
		a.abandonWrite()
	} else {
		a.interrupt()
	}
	return true
}

// abandonWrite cancels the context of a write in flight. A write blocked
// because the program does not read its input returns at once (wrapping
// context.Canceled); one that completed meanwhile is unaffected.
func (a *sendActor) abandonWrite() {
	if a.in.stage == stageInFlight && a.in.abandon != nil {
		a.in.abandon()
	}
}

// interrupt sends the foreground group a SIGINT, off the mailbox
// (interruptDone).
func (a *sendActor) interrupt() {
	a.intr.sigint = sigintInFlight
	// Evidence from before the signal (the prompt of a command that had
	// already finished) no longer settles the send: the interrupt's own
	// prompt will, and it is not left to be credited to the next send.
	a.epoch = a.bs.RearmPrompt()
	a.ev.markerSeen = false
	self, sys, bs := a.self, a.sys, a.bs
	go func() {
		res, err := bs.Signal(messages.SIGINT)
		sys.Root.Send(self, &interruptDone{pgid: res.TargetPgid, err: err})
	}()
	// The interrupt's effect (a new prompt) must be observed as new evidence.
	a.ev.lastActivity = a.clock.Now()
	a.arm(timerPoll, 0)
}

func (a *sendActor) onInterruptDone(m *interruptDone) {
	a.intr.sigint = sigintDelivered
	// A look asked for before now may have seen the shell blocked in the
	// read the signal is about to end (kill returns before the target
	// runs): only later looks count. The SIGINT's own prompt follows.
	a.look.fence = a.look.seq
	// A SIGINT that reached the shell itself may have landed before the
	// command's job took the terminal (bash takes it and starts the job
	// anyway): watch for the job and interrupt it too.
	if m.err == nil && m.pgid == a.bs.PID() {
		a.intr.sigint = sigintReachedShell
		if !a.settled() {
			a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
		}
	}
	// A foreground group that exited before the SIGINT landed left
	// nothing to interrupt: the shell's prompt settles the send.
	if m.err != nil && !a.settled() && !errors.Is(m.err, messages.ErrNoForeground) {
		a.settle("", nil, fmt.Errorf("%w: interrupt: %w", messages.ErrTransport, m.err))
	}
}
