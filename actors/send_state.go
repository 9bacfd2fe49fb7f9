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

// The send's state: the actor's data and the small machines it is made of,
// each a type that owns its fields. This file is the floor of the send's
// files: they all use it, it uses none of them.
//
// Why a product of small machines rather than one state per phase: the
// phases of a send overlap in time. A send settles with its write or its
// SIGINT still in flight and drains afterwards; a take-over or a cancel
// lands while the input is written or while the tiers wait; the session may
// freeze a send that is still clearing foreign input. One state type per
// combination would multiply them, so each concern is its own machine
// (lifecycle, start, write, interrupt, take-over, settlement) with named
// stages, and the lifecycle's moves are one table (sendMoves) and one
// function (moveTo).

// sendPhase is where a send is in its life. It only moves forward, along
// sendMoves.
type sendPhase uint8

const (
	// phaseCollecting: the readiness tiers decide when the send settles.
	phaseCollecting sendPhase = iota
	// phaseFrozen: the session is closing; only the teardown's
	// session_exit settles the send.
	phaseFrozen
	// phaseHolding: the outcome is fixed, but the result waits, off the
	// mailbox, for the receipt to be listed or the settle to be on record.
	phaseHolding
	// phaseSettled: the result went out; the write or SIGINT it began may
	// still be in flight.
	phaseSettled
	// phaseDrained: it settled while draining, nothing is in flight any
	// more, and the session was told so.
	phaseDrained
)

// sendMoves is every move of the lifecycle: from a phase, the phases that
// may follow it.
var sendMoves = [...][]sendPhase{
	phaseCollecting: {phaseFrozen, phaseHolding},
	phaseFrozen:     {phaseHolding},
	phaseHolding:    {phaseSettled},
	phaseSettled:    {phaseDrained},
	phaseDrained:    nil,
}

// moveTo moves the lifecycle to phase to, the one place it moves. It
// reports false, and stays, for a move sendMoves does not hold.
func (a *sendActor) moveTo(to sendPhase) bool {
	for _, p := range sendMoves[a.phase] {
		if p == to {
			a.phase = to
			return true
		}
	}
	return false
}

// settled reports whether the outcome is fixed.
func (a *sendActor) settled() bool { return a.phase >= phaseHolding }

// beginStage is how far the send got towards beginning its epoch.
type beginStage uint8

const (
	// notBegun: not yet, or never (the clear it waited for was abandoned,
	// or a person took the input over meanwhile).
	notBegun beginStage = iota
	// clearingForeign: it waits for the shell to take the foreign input
	// before it begins (awaitClear).
	clearingForeign
	// begun: its epoch began (begin).
	begun
)

// writeStage is how far the input got.
type writeStage uint8

const (
	stageNotYet   writeStage = iota // nothing written yet (the startup wait never writes)
	stageInFlight                   // a goroutine writes what the terminal did not take inline
	stageDone                       // the input reached the terminal (or there was none)
	stageAborted                    // skipped or failed: no more of it will be written
)

// The write gate, shared only between the send actor and the one write
// goroutine it starts: a cancel that closes the gate first guarantees the
// input is never written.
const (
	gateOpen int32 = iota
	gateRunning
	gateClosed
)

// writer is the input's way to the terminal.
type writer struct {
	stage   writeStage
	gate    atomic.Int32
	abandon context.CancelFunc // abandons the write goroutine's write
	// lines are the input's lines still to be typed, each with its Enter:
	// the next is written once the program reading the terminal consumed
	// the previous one and waits again.
	lines [][]byte
	// done hears how a write ended, inline or from its goroutine's
	// message: the actor's onWriteDone, which the files above decide.
	done func(*writeDone)
}

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

// cancelStage is whether the caller asked to cancel.
type cancelStage uint8

const (
	cancelNone cancelStage = iota
	cancelAsked
)

// interruption is the caller's cancel and the SIGINT it (or a take-over)
// sends.
type interruption struct {
	asked  cancelStage
	sigint sigintStage
	// shellWakes counts the times the shell was woken to act on a SIGINT
	// it took at its prompt (onShellWait): at most maxShellWakes.
	shellWakes int
}

// maxShellWakes: the shell is woken once per send.
const maxShellWakes = 1

// takeStage is whether a person took the input over while the send ran.
type takeStage uint8

const (
	takeNone      takeStage = iota
	takeLook                // taken over: one look settles the send
	takeInterrupt           // taken over with a SIGINT first
)

// fenceStage is whether the session waits for the write in flight to end
// before a person's hold begins (takeOverFenced).
type fenceStage uint8

const (
	fenceNone fenceStage = iota
	fenceOwed
)

// takeOverState is the take-over's part of the send.
type takeOverState struct {
	stage takeStage
	fence fenceStage
}

// settledBy is what beyond the wait reason settled the send, for its cause.
type settledBy uint8

const (
	byTiers   settledBy = iota
	byPattern           // the caller's pattern matched the output
)

// settlement is the fixed outcome and how it goes out.
type settlement struct {
	result messages.SendResult
	err    error
	// unwritten: the lines settling left untyped, for the settle event.
	unwritten [][]byte
	// overdue bounds the wait for the settle's record (settleOverdue).
	overdue  Timer
	draining bool // it settled with a write or SIGINT in flight
}

// runStage says where the actor's code runs.
type runStage uint8

const (
	// inMailbox: in the actor's own mailbox goroutine.
	inMailbox runStage = iota
	// inCaller: start runs, in the goroutine of the caller that reserved
	// the send; a look must not run there.
	inCaller
)

// sendActor owns one in-flight send, alone: it begins the send's epoch,
// writes the input, follows the session's facts, settles exactly once and
// reports to the session. It is the only place that decides why a send
// returned; nothing of its state is shared with another actor.
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
	// foreign is the input nobody sent that was discarded before this
	// send's was written (backend.ForeignInputClearer).
	foreign string
	// handback is what people did before this result (the agent's first
	// after they held the input).
	handback *messages.Handback
	// secretEntered: a person entered a secret before this result.
	secretEntered bool

	self, parent *actor.PID
	sys          *actor.ActorSystem

	phase sendPhase
	began beginStage
	run   runStage
	in    writer
	intr  interruption
	take  takeOverState

	// firstEpoch is the send's own epoch (BeginSend); epoch is the newest
	// one for prompt facts (a cancel's RearmPrompt moves it on).
	firstEpoch, epoch uint64

	ev     evidence
	look   looks
	timers timerSet

	out         settlement
	subscribers []*actor.PID // told the settlement straight from here
}

// looks paces the exact tier: one look at a time, right after an event,
// backing off while nothing happens.
type looks struct {
	flight lookStage
	seq    uint64
	// fence: looks up to this seq were asked for before a SIGINT was
	// known to have landed, so they may show the wait it ended.
	fence uint64
	delay time.Duration
	paced bool // a paced look is armed instead of a look per event
	off   bool // the platform has no exact tier
	// syncToken: the program waits; settling waits for this output barrier.
	syncToken uint64
	// fruitless counts looks in a row that walked the group (input
	// consumed, output drained) and found nobody waiting: the program is
	// producing output. Past fruitlessLimit, output no longer triggers a
	// look each; a paced look follows instead.
	fruitless int
	loopSeen  map[int]uint64 // event-loop waiters (and switches) first seen at loopAt
	loopAt    time.Time
	// shortSince: when the first wait with its own short timeout was
	// seen (see shortWait); zero when none was.
	shortSince time.Time
}

// lookStage is whether a look is in flight.
type lookStage uint8

const (
	lookIdle       lookStage = iota
	lookAsked                // a look is in flight
	lookAskedAgain           // in flight, and something happened meanwhile
)

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

// isWait reports whether the send writes nothing: a wait.
func (a *sendActor) isWait() bool { return protocol.IsWait(a.req) }

// silenceNeed is how long the session must be quiet for silence to settle
// the send: the caller's, or the configured threshold.
func (a *sendActor) silenceNeed() time.Duration {
	if a.req.Wait.Silence > 0 {
		return a.req.Wait.Silence
	}
	return messages.Ms(a.cfg.IdleSilenceMs)
}

// typing reports whether lines are still to be typed. A cancel or a
// take-over ends the typing: the lines left are reported unwritten and
// never written.
func (a *sendActor) typing() bool {
	return len(a.in.lines) > 0 && a.intr.asked == cancelNone && a.take.stage == takeNone
}
