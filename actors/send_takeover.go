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
	// takeOverLook: the look a take-over settles on.
	takeOverLook struct {
		obs backend.StdinObservation
		err error
	}
)

func (a *sendActor) onTakeOver(m *takeOver) {
	if a.settled() || a.startup || a.isWait() || a.takenOver {
		return
	}
	a.takenOver, a.takeInterrupt = true, m.interrupt
	a.gate.CompareAndSwap(gateOpen, gateClosed) // input not yet written never is
	if a.write == stageInFlight {
		// The write (or the wait for a clear) reports first; the
		// take-over goes on from onWriteDone or onForeignCleared.
		a.abandonWrite()
		return
	}
	a.afterTakeOver()
}

// afterTakeOver interrupts the running command when the person asked,
// or looks at once.
func (a *sendActor) afterTakeOver() {
	if a.settled() {
		return
	}
	if a.takeInterrupt && a.write == stageDone && a.sigint == sigintNone {
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
	need := messages.Ms(a.cfg.IdleSilenceMs)
	if a.req.Wait.Silence > 0 {
		need = a.req.Wait.Silence
	}
	if a.clock.Now().Sub(a.ev.lastActivity) >= need {
		return messages.WaitInferredIdle
	}
	return messages.WaitTimeout
}
