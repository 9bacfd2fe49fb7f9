package actors

import (
	"context"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// sendPhase is where a send is in its life. It only moves forward.
type sendPhase uint8

const (
	// phaseCollecting: the readiness tiers decide when the send settles.
	phaseCollecting sendPhase = iota
	// phaseFrozen: the session is closing; only the teardown's
	// session_exit settles the send.
	phaseFrozen
	// phaseSettled: the outcome is fixed; the write or SIGINT it began may
	// still be in flight.
	phaseSettled
	// phaseDrained: it settled while draining, nothing is in flight any
	// more, and the session was told so.
	phaseDrained
)

// writeStage is how far the input got.
type writeStage uint8

const (
	stageNotYet   writeStage = iota // nothing written yet (the startup wait never writes)
	stageInFlight                   // a goroutine writes what the terminal did not take inline
	stageDone                       // the input reached the terminal (or there was none)
	stageAborted                    // skipped or failed: no more of it will be written
)

// sigintStage is how far a cancel's interrupt got.
type sigintStage uint8

const (
	sigintNone     sigintStage = iota
	sigintInFlight             // a goroutine is signalling the foreground group
	// sigintReachedShell: it reached the shell's own group, so the
	// command's job may not have started yet; the send watches for it.
	sigintReachedShell
	sigintDelivered
)

// The write gate, shared only between the send actor and the one write
// goroutine it starts: a cancel that closes the gate first guarantees the
// input is never written.
const (
	gateOpen int32 = iota
	gateRunning
	gateClosed
)

// sendActor owns one in-flight send, alone: it begins the send's epoch,
// writes the input, follows the session's facts, settles exactly once and
// reports to the session. It is the only place that decides why a send
// returned; nothing of its state is shared with another actor.
//
// Its work lies in one file per concern: send_write.go writes the input
// (at once, pasted, or typed line by line); send_looks.go paces the exact
// tier's looks and reads what they prove; send_tiers.go holds the other
// readiness signals (the prompt marker, silence, a pattern); send_cancel.go
// cancels and interrupts; send_settle.go fixes the outcome once and
// reports it.
type sendActor struct {
	// Fixed when the session spawns it.
	ticket  uint64
	session messages.SessionID
	req     messages.SendRequest
	startup bool // the session's startup wait: no write, silence needs output
	bs      backend.Session
	exact   bool // the backend has an exact tier (backend.StdinProber)
	facts   *actor.PID
	cfg     messages.Config
	clock   Clock
	log     zerolog.Logger
	started time.Time
	// since is the caller's output cursor for a wait (WaitPolicy.Since);
	// nil: the backend's output from where the previous send's ended.
	since *uint64
	// pattern, when the caller's policy has one, settles the send when new
	// output matches; kept then holds the output taken to match it (at
	// most MaxReadBytes, the newest).
	pattern *regexp.Regexp
	kept    []byte
	matched bool
	// foreign is the input nobody sent that was discarded before this
	// send's was written (backend.ForeignInputClearer).
	foreign string
	// clearing: the send has not begun; it waits for the shell to take
	// the foreign input (awaitClear). begun: it began (begin).
	clearing, begun bool
	// takenOver: a person took the input over (onTakeOver), with a SIGINT
	// first when takeInterrupt.
	takenOver, takeInterrupt bool
	// woke: the cancel's SIGINT reached the shell at its prompt and the
	// shell was woken to act on it (onShellWait).
	woke bool
	// fenceAck: the session waits for the write in flight to end
	// (takeOverFenced).
	fenceAck bool
	// handback is what people did before this result (the agent's first
	// after they held the input).
	handback *messages.Handback
	// secretEntered: a person entered a secret before this result.
	secretEntered bool
	// lines are the input's lines still to be typed, each with its Enter:
	// the next is written once the program reading the terminal consumed
	// the previous one and waits again.
	lines [][]byte
	// unwritten: the lines settling left untyped, for the settle event.
	unwritten [][]byte

	self, parent *actor.PID
	sys          *actor.ActorSystem

	phase     sendPhase
	write     writeStage
	gate      atomic.Int32
	cancelW   context.CancelFunc // abandons the write goroutine's write
	sigint    sigintStage
	cancelled bool // the caller asked to cancel
	// inStart: start runs, in the goroutine of the caller that reserved
	// the send; a look must not run there.
	inStart bool

	// firstEpoch is the send's own epoch (BeginSend); epoch is the newest
	// one for prompt facts (a cancel's RearmPrompt moves it on).
	firstEpoch, epoch uint64

	ev     evidence
	look   looks
	timers timerSet

	result  messages.SendResult
	holding bool // settled, but the receipt is still being listed or the settle written
	// overdue bounds the wait for the settle's record (settleOverdue).
	overdue     Timer
	err         error
	draining    bool         // it settled with a write or SIGINT in flight
	subscribers []*actor.PID // told the settlement straight from here
}

// evidence is what the send has seen of the session's facts.
type evidence struct {
	outputSeen   bool
	markerSeen   bool // a verified marker, not yet proven by the exact tier
	lastActivity time.Time
	reader       string                 // the program proven to wait on the terminal
	secret       bool                   // it waits for a secret (echo off, canonical mode)
	secretPrompt *messages.SecretPrompt // that wait's identity
	truncated    bool                   // an incremental read lost output
	status       messages.SessionStatus
}

// timerSet holds the send's timers; a fired timer whose generation moved on
// is stale and ignored.
type timerSet struct {
	t            [timerKinds]Timer
	gen          [timerKinds]uint64
	silenceArmed bool
}

func (a *sendActor) settled() bool { return a.phase >= phaseSettled }

func (a *sendActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.sys, a.parent = ctx.Self(), ctx.ActorSystem(), ctx.Parent()
		a.start()
	case *factOutput:
		if !a.settled() && !a.clearing && m.epoch >= a.firstEpoch {
			a.ev.outputSeen = true
			a.ev.lastActivity = a.clock.Now()
			if a.pattern != nil && a.phase == phaseCollecting && a.matchPattern() {
				a.matched = true
				a.settle(messages.WaitInferredIdle, nil, nil)
				break
			}
			a.armSilence()
			// Output means the program ran: look again soon, from the
			// shortest interval.
			a.look.delay = 0
			a.probeOnEvent()
		}
	case *probeResult:
		a.onProbe(m)
	case *factSynced:
		if a.phase == phaseCollecting && a.look.syncToken != 0 && m.token == a.look.syncToken {
			// The barrier passed: a marker the shell printed before it
			// waited is parsed now.
			if code, ok := a.bs.PromptReady(); ok {
				a.settle(messages.WaitStdinRead, &code, nil)
			} else {
				a.settle(messages.WaitStdinRead, nil, nil)
			}
		}
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
		if a.phase == phaseCollecting {
			a.phase = phaseFrozen
		}
		a.stopTimers()
	case *writeDone:
		a.onWriteDone(m)
	case *foreignCleared:
		a.onForeignCleared(m)
	case *takeOver:
		a.onTakeOver(m)
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
	case *takeOverLook:
		a.onTakeOverLook(m)
	case *interruptDone:
		a.onInterruptDone(m)
	case *timerFired:
		if m.gen == a.timers.gen[m.kind] {
			a.onTimer(m.kind)
		}
	case *protocol.CancelSend:
		ctx.Respond(&protocol.CancelSendReply{Accepted: a.cancel()})
	case *protocol.ReadSendOutput:
		ctx.Respond(a.readOutput())
	case *settleOverdue:
		if a.holding {
			a.log.Warn().Uint64("ticket", a.ticket).Msg("the record's disk does not answer: the send's result goes out without its settle on record")
			a.deliver()
		}
	case *settleReady:
		if a.holding {
			if m.listed {
				a.result.Running = m.procs
			}
			a.deliver()
		}
	case *protocol.AwaitSend:
		if a.settled() && !a.holding {
			ctx.Respond(a.settledMsg())
		} else {
			a.subscribers = append(a.subscribers, ctx.Sender())
		}
	case *actor.Stopping:
		a.stopTimers()
		if a.overdue != nil {
			a.overdue.Stop()
		}
		if a.cancelW != nil {
			a.cancelW()
		}
	}
	a.maybeDrained(ctx)
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

// arm (re)starts timer k to fire after d; a timer it replaces goes stale.
func (a *sendActor) arm(k timerKind, d time.Duration) {
	if a.timers.t[k] != nil {
		a.timers.t[k].Stop()
	}
	a.timers.gen[k]++
	gen, self, sys := a.timers.gen[k], a.self, a.sys
	if d < 0 {
		d = 0
	}
	a.timers.t[k] = a.clock.AfterFunc(d, func() { sys.Root.Send(self, &timerFired{kind: k, gen: gen}) })
}

// stopTimers stops every timer; any already firing is stale.
func (a *sendActor) stopTimers() {
	for i, t := range a.timers.t {
		if t != nil {
			t.Stop()
			a.timers.t[i] = nil
		}
		a.timers.gen[i]++
	}
	a.timers.silenceArmed = false
}

// readOutput answers ReadSendOutput: the output since the previous read
// (with what a pattern kept), until the send settled.
func (a *sendActor) readOutput() *protocol.ReadSendOutputReply {
	if a.settled() {
		return &protocol.ReadSendOutputReply{Settled: true}
	}
	if a.clearing {
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

// isWait reports whether the send writes nothing: a wait.
func (a *sendActor) isWait() bool { return protocol.IsWait(a.req) }
