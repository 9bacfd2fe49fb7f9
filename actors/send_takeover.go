package actors

import (
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// A person took the session's input over (TakeControl) while this send
// ran. The send settles at once with cause taken_over: input not yet
// written never is, and its wait reason is what is true at that moment,
// from one look at the kernel (stdin_read only when it proves a wait for
// input). A take with Interrupt first sends the running command a SIGINT
// and lets the normal tiers see its prompt, for at most takeOverBound.
// A wait (nothing to write) is not ended: the person's actions may end
// it like anyone's.

// takeOverBound is how long a take-over's SIGINT may take to bring the
// prompt back before the send settles on one look.
const takeOverBound = 750 * time.Millisecond

type (
	// takeOver: session → send, a person took the input.
	takeOver struct{ interrupt bool }
	// takeOverFenced: send → session, it writes nothing more.
	takeOverFenced struct{ ticket uint64 }
	// takeOverLook: the look a take-over settles on.
	takeOverLook struct {
		obs backend.StdinObservation
		err error
	}
)

// onTakeOver closes the write gate (input not yet written never is) and
// tells the session once nothing more is written (takeOverFenced): the
// person's hold begins after the agent's last byte.
func (a *sendActor) onTakeOver(m *takeOver) {
	a.in.gate.CompareAndSwap(gateOpen, gateClosed)
	takes := !a.settled() && !a.startup && !a.isWait() && a.take.stage == takeNone
	if takes {
		a.take.stage = takeLook
		if m.interrupt {
			a.take.stage = takeInterrupt
		}
	}
	if a.in.stage == stageInFlight {
		// The write (or the wait for a clear) reports first; the fence
		// and the take-over go on from onWriteDone or onForeignCleared.
		a.take.fence = fenceOwed
		a.abandonWrite()
		return
	}
	a.ackFence()
	if takes {
		a.afterTakeOver()
	}
}

// ackFence tells the session the send writes nothing more.
func (a *sendActor) ackFence() {
	a.take.fence = fenceNone
	a.sys.Root.Send(a.parent, &takeOverFenced{ticket: a.ticket})
}

// afterTakeOver interrupts the running command when the person asked,
// or looks at once.
func (a *sendActor) afterTakeOver() {
	if a.settled() {
		return
	}
	if a.take.stage == takeInterrupt && a.in.stage == stageDone && a.intr.sigint == sigintNone {
		a.interrupt()
		a.arm(timerTakeOver, takeOverBound)
		return
	}
	a.lookForTakeOver()
}

// lookForTakeOver takes one look at the foreground group, off the
// mailbox, and settles on it (onTakeOverLook).
func (a *sendActor) lookForTakeOver() {
	p, ok := a.bs.(backend.StdinProber)
	if !ok || a.look.off {
		a.settle(a.unprovenReason(), nil, nil)
		return
	}
	self, sys := a.self, a.sys
	go func() {
		obs, err := p.ProbeStdin()
		sys.Root.Send(self, &takeOverLook{obs: obs, err: err})
	}()
}

func (a *sendActor) onTakeOverLook(m *takeOverLook) {
	if a.settled() || a.phase != phaseCollecting {
		return
	}
	if m.err != nil || !exactEvidence(m.obs) {
		a.settle(a.unprovenReason(), nil, nil)
		return
	}
	a.ev.secret = m.obs.Secret
	if m.obs.Shell {
		if code, ok := a.bs.PromptReady(); ok {
			a.settle(messages.WaitStdinRead, &code, nil)
			return
		}
	} else {
		a.ev.reader = m.obs.Reader
	}
	a.settle(messages.WaitStdinRead, nil, nil)
}

// unprovenReason is a take-over's wait reason when no wait for input was
// proven: inferred_idle after the silence threshold without output, and
// otherwise timeout (the send returned before the program was ready).
func (a *sendActor) unprovenReason() messages.WaitReason {
	if a.clock.Now().Sub(a.ev.lastActivity) >= a.silenceNeed() {
		return messages.WaitInferredIdle
	}
	return messages.WaitTimeout
}
