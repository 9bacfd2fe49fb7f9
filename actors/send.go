package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// The send actor's mailbox: Receive routes each message to the machine it
// concerns. The send's files lie in floors, each using only those below:
// this file; send_start.go (the reservation: subscribe, clear foreign
// input, begin); send_written.go (what a finished write leads to);
// send_tiers.go (the prompt marker, silence, a pattern); send_looks.go (the
// exact tier's looks); send_takeover.go (a person takes the input);
// send_cancel.go (cancel, SIGINT); send_write.go (the input's bytes and
// their write); send_settle.go and send_record.go (the outcome, once, and
// its record); send_state.go (the data and the lifecycle's moves).

// Receive dispatches; after every message a send that settled while
// draining may have drained.
func (a *sendActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.sys, a.parent = ctx.Self(), ctx.ActorSystem(), ctx.Parent()
		a.in.done = a.onWriteDone
		a.start()
	case *factOutput:
		a.onOutput(m)
	case *probeResult:
		a.onProbe(m)
	case *factSynced:
		a.onSynced(m)
	case *factPrompt:
		a.onPrompt(m.PromptFact)
	case *factExited:
		a.ev.status = m.status
		a.settle(messages.WaitSessionExit, nil, nil)
	case *forceSettle:
		if m.status != nil {
			a.ev.status = *m.status
		}
		a.settle(m.reason, nil, nil)
	case *freeze:
		a.moveTo(phaseFrozen) // only from phaseCollecting
		a.stopTimers()
	case *writeDone:
		a.onWriteDone(m)
	case *foreignCleared:
		a.onForeignCleared(m)
	case *takeOver:
		a.onTakeOver(m)
	case *takeOverLook:
		a.onTakeOverLook(m)
	case *interruptDone:
		a.onInterruptDone(m)
	case *timerFired:
		if m.gen == a.timers.gen[m.kind] {
			a.onTimer(m.kind)
		}
	case *actor.Stopping:
		a.onStopping()
	default:
		a.receiveRequest(ctx)
	}
	a.maybeDrained(ctx)
}

// receiveRequest answers the session's and the caller's requests, and the
// settlement's own messages.
func (a *sendActor) receiveRequest(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *secretNote:
		if a.settled() {
			a.sys.Root.Send(a.parent, &secretBounced{})
		} else {
			a.secretEntered = true
		}
	case *handbackNote:
		if a.settled() {
			a.sys.Root.Send(a.parent, &handbackBounced{hb: m.hb})
		} else {
			a.handback = joinPending(a.handback, m.hb)
		}
	case *protocol.CancelSend:
		ctx.Respond(&protocol.CancelSendReply{Accepted: a.onCancel()})
	case *protocol.ReadSendOutput:
		ctx.Respond(a.readOutput())
	case *protocol.AwaitSend:
		if a.phase >= phaseSettled {
			ctx.Respond(a.settledMsg())
		} else {
			a.subscribers = append(a.subscribers, ctx.Sender())
		}
	case *settleOverdue:
		if a.phase == phaseHolding {
			a.log.Warn().Uint64("ticket", a.ticket).Msg("the record's disk does not answer: the send's result goes out without its settle on record")
			a.deliver()
		}
	case *settleReady:
		if a.phase == phaseHolding {
			if m.listed {
				a.out.result.Running = m.procs
			}
			a.deliver()
		}
	}
}

// onOutput follows new output of the send's epoch: a pattern may match,
// silence starts over, and the exact tier looks again soon.
func (a *sendActor) onOutput(m *factOutput) {
	if a.settled() || a.began == clearingForeign || m.epoch < a.firstEpoch {
		return
	}
	a.ev.outputSeen = true
	a.ev.lastActivity = a.clock.Now()
	if a.pattern != nil && a.phase == phaseCollecting && a.matchPattern() {
		a.settleBy(messages.WaitInferredIdle, nil, nil, byPattern)
		return
	}
	a.armSilence()
	// Output means the program ran: look again soon, from the
	// shortest interval.
	a.look.delay = 0
	a.probeOnEvent()
}

// onSynced settles once the output barrier a proven wait asked for passed:
// a marker the shell printed before it waited is parsed now.
func (a *sendActor) onSynced(m *factSynced) {
	if a.phase != phaseCollecting || a.look.syncToken == 0 || m.token != a.look.syncToken {
		return
	}
	if code, ok := a.bs.PromptReady(); ok {
		a.settle(messages.WaitStdinRead, &code, nil)
	} else {
		a.settle(messages.WaitStdinRead, nil, nil)
	}
}

// onStopping lets nothing of the send outlive it.
func (a *sendActor) onStopping() {
	a.stopTimers()
	if a.out.overdue != nil {
		a.out.overdue.Stop()
	}
	if a.in.abandon != nil {
		a.in.abandon()
	}
}

// onTimer runs a timer of the current generation: the deadline settles,
// the others re-check their tier.
func (a *sendActor) onTimer(k timerKind) {
	if a.phase != phaseCollecting {
		return
	}
	switch k {
	case timerDeadline:
		// Input the terminal has not accepted by now is abandoned: a
		// program that never reads must not hold the session's send slot
		// past the send it belongs to.
		a.abandonWrite()
		a.settle(messages.WaitTimeout, nil, nil)
	case timerPoll:
		a.onPoll()
	case timerSilence:
		a.timers.silenceArmed = false
		a.armSilence()
	case timerProbe:
		a.look.paced = false
		if a.look.syncToken != 0 {
			a.look.syncToken = a.bs.(backend.Syncer).Sync()
			a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
			return
		}
		a.requestProbe()
	case timerTakeOver:
		a.lookForTakeOver()
	}
}

// readOutput answers ReadSendOutput: the output since the previous read
// (with what a pattern kept), until the send settled.
func (a *sendActor) readOutput() *protocol.ReadSendOutputReply {
	if a.settled() {
		return &protocol.ReadSendOutputReply{Settled: true}
	}
	if a.began == clearingForeign {
		return &protocol.ReadSendOutputReply{} // not begun: no output of its own yet
	}
	r := a.bs.TakeOutput()
	a.ev.truncated = a.ev.truncated || r.Truncated
	if len(a.kept) > 0 {
		r.Delta = string(a.kept) + r.Delta
		a.kept = a.kept[:0]
	}
	return &protocol.ReadSendOutputReply{Read: r}
}
