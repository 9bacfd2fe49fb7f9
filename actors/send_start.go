package actors

// The start: the send is reserved, subscribes to the facts and begins its
// epoch, after it waited (awaitClear) for the shell to take input nobody
// sent.

import (
	"context"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// start subscribes to the session's facts, begins the send's epoch and
// writes. It runs while the session spawns this actor, in the goroutine of
// the caller that reserved the send, so input that fits the terminal's
// queue reaches the program before the reservation is even answered.
func (a *sendActor) start() {
	a.run = inCaller
	defer func() { a.run = inMailbox }()
	// First the subscription: facts caused by the write are reported
	// after it, so none is lost; older ones are replayed and filtered by
	// epoch.
	a.sys.Root.Send(a.facts, &subscribeFacts{pid: a.self})
	a.ev.lastActivity = a.clock.Now()
	a.recordStart()
	deadline := messages.Ms(a.cfg.TimeoutMs)
	if a.req.Wait.Timeout > 0 {
		deadline = a.req.Wait.Timeout
	}
	a.arm(timerDeadline, deadline-a.clock.Now().Sub(a.started))
	// Input nobody sent that waits for the shell at its prompt goes
	// first, so this send's line runs as written; the result says what it
	// was. Looked at before BeginSend, which forgets the prompt.
	if c, ok := a.bs.(backend.ForeignInputClearer); ok && a.exact && !a.startup && !a.isWait() {
		foreign, clear, busy := c.ClearForeignInput(false)
		a.foreign = foreign
		if busy {
			a.awaitClear(c)
			return
		}
		a.begin(clear)
		return
	}
	a.begin(nil)
}

// begin begins the send's epoch (or continues the previous one for a
// wait) and writes, clear (the foreign input's erasure) first.
func (a *sendActor) begin(clear []byte) {
	a.began = begun
	switch {
	case a.startup:
		// The startup wait uses epoch 0, which a new backend session
		// collects from its first byte.
	case a.isWait():
		// A wait continues the previous send's epoch: a prompt that
		// returned since it settled still counts.
		a.epoch = a.bs.Resume()
	default:
		a.epoch = a.bs.BeginSend()
	}
	a.firstEpoch = a.epoch
	a.armSilence()
	switch {
	case a.startup:
		// The startup wait writes nothing.
	case a.isWait():
		// Nothing to write: the send asks whether the program waits.
		a.in.stage = stageDone
		a.requestProbe()
	default:
		a.writeInput(clear)
	}
}

// foreignRetry is how often a send asks again whether the shell took the
// foreign input it found, for at most foreignWait; past that the input is
// written without the erasure (as before the clear existed).
const (
	foreignRetry = 5 * time.Millisecond
	foreignWait  = 2 * time.Second
	// maxForeignReport bounds what the result reports discarded over the
	// clearer's retries (each bounds its own).
	maxForeignReport = 1 << 10
)

// awaitClear waits, off the mailbox, until the shell has taken the foreign
// input the first look found it still reading (ClearForeignInput reported
// busy): a goroutine asks again every foreignRetry and reports with
// foreignCleared; the send begins then. The write counts as in flight
// meanwhile, so the session keeps the slot: a cancel closes the gate and
// nothing is written (the goroutine reports the skip), a settle (the
// deadline) does the same.
func (a *sendActor) awaitClear(c backend.ForeignInputClearer) {
	a.in.stage, a.began = stageInFlight, clearingForeign
	wctx, cancel := context.WithCancel(context.Background())
	a.in.abandon = cancel
	self, sys, gate, clock := a.self, a.sys, &a.in.gate, a.clock
	go func() {
		m := &foreignCleared{}
		deadline := clock.Now().Add(foreignWait)
		for {
			wake := make(chan struct{})
			t := clock.AfterFunc(foreignRetry, func() { close(wake) })
			select {
			case <-wctx.Done():
				t.Stop()
				m.abandoned = true
			case <-wake:
				if gate.Load() == gateClosed {
					m.abandoned = true
					break
				}
				text, keys, busy := c.ClearForeignInput(true)
				m.foreign += text
				if busy && clock.Now().Before(deadline) {
					continue
				}
				m.keys, m.timedOut = keys, busy
			}
			break
		}
		sys.Root.Send(self, m)
	}()
}

// onForeignCleared begins the send whose start waited for the clear.
func (a *sendActor) onForeignCleared(m *foreignCleared) {
	if a.take.fence == fenceOwed {
		defer a.ackFence() // after the write state below is settled
	}
	f := a.foreign + m.foreign
	a.foreign = f[:textcut.Head(f, maxForeignReport)]
	if a.take.stage != takeNone && !a.settled() {
		a.began, a.in.stage = notBegun, stageAborted // never begun: nothing written
		a.afterTakeOver()
		return
	}
	if m.abandoned || a.in.gate.Load() == gateClosed || a.settled() {
		a.in.stage = stageAborted
		a.settle("", nil, messages.ErrAbortedBeforeWrite) // still clearing: nothing began
		a.began = notBegun
		return
	}
	a.began, a.in.stage = notBegun, stageNotYet
	if m.timedOut {
		a.log.Debug().Dur("after", foreignWait).Msg("the shell did not take the foreign input; the send is written without clearing it")
	}
	a.begin(m.keys)
}
