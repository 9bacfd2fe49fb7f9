package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"
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
	// lines are the input's lines still to be typed, each with its Enter:
	// the next is written once the program reading the terminal consumed
	// the previous one and waits again.
	lines [][]byte

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

	result      messages.SendResult
	holding     bool // settled, but the receipt is still being listed
	err         error
	draining    bool         // it settled with a write or SIGINT in flight
	subscribers []*actor.PID // told the settlement straight from here
}

// evidence is what the send has seen of the session's facts.
type evidence struct {
	outputSeen   bool
	markerSeen   bool // a verified marker, not yet proven by the exact tier
	lastActivity time.Time
	reader       string // the program proven to wait on the terminal
	secret       bool   // it waits for a secret (echo off, canonical mode)
	truncated    bool   // an incremental read lost output
	status       messages.SessionStatus
}

// looks paces the exact tier: one look at a time, right after an event,
// backing off while nothing happens.
type looks struct {
	inFlight bool
	again    bool // something happened while a look was in flight
	seq      uint64
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
		if !a.settled() && m.epoch >= a.firstEpoch {
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
	case *interruptDone:
		a.onInterruptDone(m)
	case *timerFired:
		if m.gen == a.timers.gen[m.kind] {
			a.onTimer(m.kind)
		}
	case *CancelSend:
		ctx.Respond(&CancelSendReply{Accepted: a.cancel()})
	case *ReadSendOutput:
		ctx.Respond(a.readOutput())
	case *leftoversListed:
		if a.holding {
			a.result.Running = m.procs
			a.deliver()
		}
	case *AwaitSend:
		if a.settled() && !a.holding {
			ctx.Respond(a.settledMsg())
		} else {
			a.subscribers = append(a.subscribers, ctx.Sender())
		}
	case *actor.Stopping:
		a.stopTimers()
		if a.cancelW != nil {
			a.cancelW()
		}
	}
	a.maybeDrained(ctx)
}

// input is the request's text and, when it submits, the Enter.
func input(req messages.SendRequest, enter []byte) []byte {
	data := []byte(req.Text)
	if req.Submit {
		data = append(data, enter...)
	}
	return data
}

// start subscribes to the session's facts, begins the send's epoch and
// writes. It runs while the session spawns this actor, in the goroutine of
// the caller that reserved the send, so input that fits the terminal's
// queue reaches the program before the reservation is even answered.
func (a *sendActor) start() {
	a.inStart = true
	defer func() { a.inStart = false }()
	// First the subscription: facts caused by the write are reported
	// after it, so none is lost; older ones are replayed and filtered by
	// epoch.
	a.sys.Root.Send(a.facts, &subscribeFacts{pid: a.self})
	a.ev.lastActivity = a.clock.Now()
	// Input nobody sent that waits for the shell at its prompt goes
	// first, so this send's line runs as written; the result says what it
	// was. Looked at before BeginSend, which forgets the prompt.
	var clear []byte
	if c, ok := a.bs.(backend.ForeignInputClearer); ok && a.exact && !a.startup && !a.isWait() {
		a.foreign, clear = c.ClearForeignInput()
	}
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
	deadline := messages.Ms(a.cfg.TimeoutMs)
	if a.req.Wait.Timeout > 0 {
		deadline = a.req.Wait.Timeout
	}
	a.arm(timerDeadline, deadline-a.clock.Now().Sub(a.started))
	a.armSilence()
	if a.startup {
		return
	}
	if a.isWait() {
		// Nothing to write: the send asks whether the program waits.
		a.write = stageDone
		a.requestProbe()
		return
	}
	enter := a.bs.Enter()
	var keys []byte
	if len(a.req.Keys) > 0 {
		keys = a.keys()
	}
	if !a.req.Raw && !a.req.Paste && a.exact && strings.Contains(a.req.Text, "\n") {
		// Typed line by line: only the exact tier can tell when the
		// reader took a line, so a backend without one gets it all at
		// once, as does a Raw request. Keys go after the last line.
		lines := typedLines(a.req, enter)
		lines[len(lines)-1] = append(lines[len(lines)-1], keys...)
		a.lines = lines[1:]
		a.writeChunk(append(clear, lines[0]...))
		return
	}
	data := input(a.req, enter)
	if a.req.Paste {
		data = a.pasted(enter)
	}
	a.writeChunk(append(append(clear, data...), keys...))
}

// writeChunk writes data: inline what the terminal accepts now (most input
// fits its queue), the rest from a goroutine. The write reports with
// writeDone, inline or from the goroutine.
func (a *sendActor) writeChunk(data []byte) {
	a.write = stageInFlight
	if tw, ok := a.bs.(backend.TryWriter); ok && (a.gate.Load() == gateRunning || a.gate.CompareAndSwap(gateOpen, gateRunning)) {
		n, err := tw.TryWrite(data)
		if err != nil || n == len(data) {
			a.onWriteDone(&writeDone{err: err})
			return
		}
		data = data[n:]
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.cancelW = cancel
	self, sys, bs, gate := a.self, a.sys, a.bs, &a.gate
	go func() {
		if gate.Load() != gateRunning && !gate.CompareAndSwap(gateOpen, gateRunning) {
			sys.Root.Send(self, &writeDone{skipped: true})
			return
		}
		err := bs.Write(wctx, data)
		sys.Root.Send(self, &writeDone{err: err})
	}()
}

func (a *sendActor) onWriteDone(m *writeDone) {
	if a.cancelW != nil {
		a.cancelW()
	}
	switch {
	case m.skipped:
		a.write = stageAborted
		a.settle("", nil, messages.ErrAbortedBeforeWrite)
	case m.err != nil && a.cancelled && errors.Is(m.err, context.Canceled):
		// cancel abandoned the write: some of the input may have reached
		// the program, so it gets the SIGINT a written send gets.
		a.write = stageDone
		if !a.settled() {
			a.interrupt()
		}
	case m.err != nil:
		a.write = stageAborted
		a.settle("", nil, fmt.Errorf("%w: write: %w", messages.ErrTransport, m.err))
	default:
		a.write = stageDone
		a.ev.lastActivity = a.clock.Now()
		a.armSilence()
		if a.cancelled && !a.settled() {
			a.interrupt()
		}
		if a.look.off {
			// No exact tier after all: the rest goes at once.
			a.advance()
		}
		a.probeOnEvent()
	}
}

// typing reports whether lines are still to be typed. A cancel ends the
// typing: the lines left are reported unwritten and never written.
func (a *sendActor) typing() bool { return len(a.lines) > 0 && !a.cancelled }

// typedLines splits a request's input into the lines a person types: at
// each \n (a \r\n counts as one), every line ending in the terminal's
// Enter; text after the last newline is the last line, with an Enter when
// the request submits.
func typedLines(req messages.SendRequest, enter []byte) [][]byte {
	var out [][]byte
	text := req.Text
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		out = append(out, append([]byte(strings.TrimSuffix(text[:i], "\r")), enter...))
		text = text[i+1:]
	}
	if text != "" || req.Submit {
		last := []byte(text)
		if req.Submit {
			last = append(last, enter...)
		}
		out = append(out, last)
	}
	return out
}

// advance types the next line once the reader took the previous one (the
// caller has the evidence); it reports whether lines were still pending,
// in which case the send must not settle. Without an exact tier (a look
// found none) the rest is written at once.
func (a *sendActor) advance() bool {
	if !a.typing() {
		return false
	}
	if a.write != stageDone || a.phase != phaseCollecting {
		return true
	}
	data := a.lines[0]
	a.lines = a.lines[1:]
	if a.look.off {
		for _, l := range a.lines {
			data = append(data, l...)
		}
		a.lines = nil
	}
	// Only evidence from after this line counts for what follows.
	a.epoch = a.bs.RearmPrompt()
	a.ev.markerSeen, a.ev.reader, a.ev.secret = false, "", false
	a.ev.lastActivity = a.clock.Now()
	a.look.loopSeen, a.look.delay, a.look.syncToken, a.look.fruitless, a.look.shortSince = nil, 0, 0, 0, time.Time{}
	a.writeChunk(data)
	return true
}

// cancel requests cancellation. Input that was not yet written never is;
// otherwise a real SIGINT goes to the foreground group once the write
// settled. The send then settles through the normal tiers.
func (a *sendActor) cancel() bool {
	if a.settled() || a.cancelled {
		return !a.settled()
	}
	a.cancelled = true
	if a.gate.CompareAndSwap(gateOpen, gateClosed) {
		if a.write != stageInFlight {
			a.settle("", nil, messages.ErrAbortedBeforeWrite)
		}
		// Otherwise the write goroutine finds the gate closed and reports
		// the skip.
		return true
	}
	if a.write == stageInFlight {
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
	if a.write == stageInFlight && a.cancelW != nil {
		a.cancelW()
	}
}

func (a *sendActor) interrupt() {
	a.sigint = sigintInFlight
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
	a.sigint = sigintDelivered
	// A look asked for before now may have seen the shell blocked in the
	// read the signal is about to end (kill returns before the target
	// runs): only later looks count. The SIGINT's own prompt follows.
	a.look.fence = a.look.seq
	// A SIGINT that reached the shell itself may have landed before the
	// command's job took the terminal (bash takes it and starts the job
	// anyway): watch for the job and interrupt it too.
	if m.err == nil && m.pgid == a.bs.PID() {
		a.sigint = sigintReachedShell
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

// markerSettles reports whether a prompt marker settles the send by
// itself. Only where no exact tier can prove the prompt (macOS, an
// unsupported architecture), and in the startup wait, when nothing but the
// shell has run: on Linux a program of the same user can read the nonce
// (ptrace, /proc/<shell>/mem), hand the terminal back and print the marker
// while it runs on. The proof is the kernel's: the shell itself blocked
// reading the terminal, with the input consumed and the output drained.
// It also shows that every line written at once has run (each prints its
// own marker) and that a command left running by an earlier send has not
// printed the marker before the shell read this input.
func (a *sendActor) markerSettles() bool {
	return !a.exact || a.look.off || a.startup
}

func (a *sendActor) onPrompt(f backend.PromptFact) {
	if a.phase != phaseCollecting || f.Epoch != a.epoch {
		return
	}
	if f.ShellForeground && a.markerSettles() {
		if a.advance() {
			// The shell is back at its prompt: the next line is typed.
			return
		}
		code := f.ExitCode
		a.settle(messages.WaitStdinRead, &code, nil)
		return
	}
	a.ev.markerSeen = true
	a.armSilence()
	if f.ShellForeground {
		// The probe decides; its proof takes the marker's status.
		a.requestProbe()
		return
	}
	// Marker seen but the terminal is not handed back yet: re-check every
	// poll interval; silence waits the hand-off grace on top.
	a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
}

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
	}
}

// onPoll re-checks the prompt a marker announced before the terminal was
// handed back, and watches for a job that started after a SIGINT reached
// the shell.
func (a *sendActor) onPoll() {
	if code, ok := a.bs.PromptReady(); ok && a.markerSettles() {
		if !a.advance() {
			a.settle(messages.WaitStdinRead, &code, nil)
		}
		return
	} else if ok {
		a.requestProbe()
	}
	if a.sigint == sigintReachedShell {
		if pgid, err := a.bs.Foreground(); err == nil && pgid != a.bs.PID() {
			a.log.Debug().Uint64("ticket", a.ticket).Int("pgid", pgid).Msg("cancel: the job started after the SIGINT reached the shell; interrupting it")
			a.interrupt()
			return
		}
		a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
		return
	}
	if a.ev.markerSeen {
		a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
	}
}

// armSilence (re)arms the silence check for the remaining quiet time, or
// settles when the session has been quiet long enough.
func (a *sendActor) armSilence() {
	if a.phase != phaseCollecting || a.write == stageInFlight {
		return
	}
	if a.startup && !a.ev.outputSeen || a.typing() || a.req.Wait.NoSilence {
		// Zero-output silence never publishes a session; only the
		// deadline ends a silent startup. Silence before the last line
		// is typed does not end a send either.
		return
	}
	need := messages.Ms(a.cfg.IdleSilenceMs)
	if a.req.Wait.Silence > 0 {
		need = a.req.Wait.Silence
	}
	if a.ev.markerSeen {
		need += messages.Ms(a.cfg.HandoffGraceMs)
	}
	quiet := a.clock.Now().Sub(a.ev.lastActivity)
	if quiet >= need {
		a.settle(messages.WaitInferredIdle, nil, nil)
		return
	}
	if !a.timers.silenceArmed {
		// A pending check that fires early simply re-arms: activity only
		// moves lastActivity forward.
		a.timers.silenceArmed = true
		a.arm(timerSilence, need-quiet)
	}
}

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

func (a *sendActor) readOutput() *ReadSendOutputReply {
	if a.settled() {
		return &ReadSendOutputReply{Settled: true}
	}
	r := a.bs.TakeOutput()
	a.ev.truncated = a.ev.truncated || r.Truncated
	if len(a.kept) > 0 {
		r.Delta = string(a.kept) + r.Delta
		a.kept = a.kept[:0]
	}
	return &ReadSendOutputReply{Read: r}
}

// isWait reports whether the send writes nothing: a wait.
func (a *sendActor) isWait() bool { return isWaitRequest(a.req) }

// isWaitRequest reports whether req writes nothing: a wait.
func isWaitRequest(req messages.SendRequest) bool {
	return req.Text == "" && !req.Submit && len(req.Keys) == 0
}

// keys encodes the request's named keys for the program reading now
// (application cursor mode). The session checked the names.
func (a *sendActor) keys() []byte {
	appCursor := false
	if t, ok := a.bs.(backend.Terminal); ok {
		appCursor, _, _ = t.InputModes()
	}
	var out []byte
	for _, k := range a.req.Keys {
		b, _ := backend.EncodeKey(k, appCursor)
		out = append(out, b...)
	}
	return out
}

// pasted is the request's text as a terminal pastes it: between
// bracketed-paste markers when the program turned them on, all at once.
func (a *sendActor) pasted(enter []byte) []byte {
	var data []byte
	if t, ok := a.bs.(backend.Terminal); ok {
		if _, bp, _ := t.InputModes(); bp {
			data = append(append(append(data, "\x1b[200~"...), a.req.Text...), "\x1b[201~"...)
		}
	}
	if data == nil {
		data = []byte(a.req.Text)
	}
	if a.req.Submit {
		data = append(data, enter...)
	}
	return data
}

// patternWindow is how far back before new output a pattern may start:
// a match that spans reads is found, and a flood is not rescanned whole
// for every chunk.
const patternWindow = 4096

// matchPattern takes the new output into kept and reports whether the
// pattern matches it (with the window before it).
func (a *sendActor) matchPattern() bool {
	r := a.bs.TakeOutput()
	a.ev.truncated = a.ev.truncated || r.Truncated
	var pending string
	if p, ok := a.bs.(backend.OutputPeeker); ok {
		// The line the cursor is on (a prompt without a newline) is not
		// handed out yet, but a pattern may be waiting for it.
		pending = p.PeekOutput()
	}
	if r.Delta == "" && pending == "" {
		return false
	}
	from := max(len(a.kept)-patternWindow, 0)
	a.kept = append(a.kept, r.Delta...)
	if over := len(a.kept) - a.cfg.MaxReadBytes; over > 0 {
		for over < len(a.kept) && !utf8.RuneStart(a.kept[over]) {
			over++
		}
		a.kept = append(a.kept[:0], a.kept[over:]...)
		a.ev.truncated = true
		from = max(from-over, 0)
	}
	return a.pattern.Match(append(a.kept[from:len(a.kept):len(a.kept)], pending...))
}

// settle fixes the send's outcome once. After it, output reaches only
// scrollback.
func (a *sendActor) settle(reason messages.WaitReason, code *int, err error) {
	if a.settled() {
		return
	}
	closing := a.phase == phaseFrozen
	a.phase = phaseSettled
	a.stopTimers()
	a.sys.Root.Send(a.facts, &unsubscribeFacts{pid: a.self})
	out := a.bs.EndSend()
	if a.isWait() && a.since != nil {
		// A wait shows the output since the caller's cursor, what was
		// printed before it began included.
		if r, err := a.bs.ReadSince(*a.since); err == nil {
			out.Delta, out.Cursor, out.OmittedFrom, out.OmittedTo = r.Text, r.Cursor, r.OmittedFrom, r.OmittedTo
			out.Truncated = out.Truncated || r.Truncated || r.More
		}
	}
	if len(a.kept) > 0 {
		out.Delta = string(a.kept) + out.Delta
		if over := len(out.Delta) - a.cfg.MaxReadBytes; over > 0 {
			for over < len(out.Delta) && !utf8.RuneStart(out.Delta[over]) {
				over++
			}
			out.Delta, out.Truncated = out.Delta[over:], true
		}
		a.kept = nil
	}
	a.result = messages.SendResult{
		Viewport:   out.Delta,
		WaitReason: reason,
		Cause:      a.cause(reason, code, err, closing),
		Status:     a.ev.status,
		Truncated:  a.ev.truncated || out.Truncated,
		ExitCode:   code,
		Reader:     a.ev.reader,
		Elapsed:    a.clock.Now().Sub(a.started),
		Unwritten:  len(a.lines),
		Cursor:     out.Cursor, OmittedFrom: out.OmittedFrom, OmittedTo: out.OmittedTo,
		// Only a program's (or the shell's read builtin's) proven wait is a
		// secret prompt; a prompt marker means the shell's line editor.
		Secret:       a.ev.secret && code == nil && reason == messages.WaitStdinRead && err == nil,
		ForeignInput: a.foreign,
	}
	if t, ok := a.bs.(backend.Terminal); ok {
		// A full-screen program: its screen is the result a person sees.
		if _, _, alt := t.InputModes(); alt || a.req.Screen {
			sc := t.Screen()
			a.result.Screen = &sc
		}
	}
	var await backend.LeftoverLister
	if l, ok := a.bs.(backend.LeftoverLister); ok && a.result.Cause == messages.CausePrompt {
		// The receipt of a command that returned to the prompt: what it
		// left running. A job forked an instant ago has no name of its
		// own yet; the settlement then waits (off the mailbox) for it.
		var starting bool
		a.result.Running, starting = l.Leftovers()
		if starting {
			await = l
		}
	}
	if len(a.lines) > 0 {
		a.result.FirstUnwritten = strings.TrimRight(string(a.lines[0]), "\r\n")
		a.lines = nil // never written later
	}
	a.err = err
	if err != nil {
		a.log.Debug().Err(err).Uint64("ticket", a.ticket).Msg("send failed")
	}
	a.draining = a.write == stageInFlight || a.sigint == sigintInFlight
	if await != nil {
		a.holding = true
		self, sys := a.self, a.sys
		go func() { sys.Root.Send(self, &leftoversListed{procs: await.AwaitLeftovers()}) }()
		return
	}
	a.deliver()
}

// deliver reports the fixed result to the session and the waiters.
func (a *sendActor) deliver() {
	a.holding = false
	a.sys.Root.Send(a.parent, &sendFinished{
		ticket: a.ticket, result: a.result, err: a.err, draining: a.draining,
	})
	msg := a.settledMsg()
	for _, p := range a.subscribers {
		a.sys.Root.Send(p, msg)
	}
	a.subscribers = nil
}

// leftoversListed carries the receipt the settlement waited for.
type leftoversListed struct{ procs []messages.Process }

// cause names the condition that settled the send. A cancel wins over
// whatever settled the interrupted command: the caller asked for it.
func (a *sendActor) cause(reason messages.WaitReason, code *int, err error, closing bool) messages.Cause {
	switch {
	case errors.Is(err, messages.ErrAbortedBeforeWrite):
		return messages.CauseCancelled
	case err != nil:
		return messages.CauseFailed
	case reason == messages.WaitSessionExit && closing:
		return messages.CauseClosed
	case reason == messages.WaitSessionExit:
		return messages.CauseExit
	case a.cancelled:
		return messages.CauseCancelled
	case reason == messages.WaitStdinRead && code != nil:
		return messages.CausePrompt
	case reason == messages.WaitStdinRead:
		return messages.CauseInput
	case a.matched:
		return messages.CausePattern
	case reason == messages.WaitInferredIdle:
		return messages.CauseSilence
	}
	return messages.CauseDeadline
}

func (a *sendActor) settledMsg() *SendSettled {
	return &SendSettled{Session: a.session, Ticket: a.ticket, Result: a.result, Err: a.err}
}

// maybeDrained tells the session once a send that settled while draining
// has nothing in flight; the session keeps the slot until then, so the next
// send sees no late bytes or signals. The session retires this actor with a
// poison pill (never Stop, which would drop requests already queued here).
func (a *sendActor) maybeDrained(ctx actor.Context) {
	if a.phase == phaseSettled && a.draining && a.write != stageInFlight && a.sigint != sigintInFlight {
		a.phase = phaseDrained
		ctx.Send(a.parent, &sendDrained{ticket: a.ticket})
	}
}

// Probe pacing: right after an event, then doubling up to pollIntervalMs
// while nothing happens.
const firstProbeDelay = time.Millisecond

// fruitlessLimit is how many looks in a row may find a program running
// before output stops triggering looks. A REPL answering a line takes two
// or three (its echo, then its result, arrive before its prompt); a
// program flooding the terminal takes one per read.
const fruitlessLimit = 8

// requestProbe asks the facts actor for a look, one at a time.
func (a *sendActor) requestProbe() {
	if !a.exact || a.look.off || a.phase != phaseCollecting || a.startup || a.write != stageDone || a.look.syncToken != 0 {
		return
	}
	if a.look.inFlight {
		a.look.again = true
		return
	}
	a.look.inFlight, a.look.again = true, false
	a.look.seq++
	req, facts, self, sys := &probeRequest{seq: a.look.seq}, a.facts, a.self, a.sys
	if a.inStart {
		// start runs in the caller's goroutine (inside Service.Send):
		// a probe stuck in the kernel must never hold that goroutine,
		// whose context could not end the wait.
		go sys.Root.RequestWithCustomSender(facts, req, self)
		return
	}
	sys.Root.RequestWithCustomSender(facts, req, self)
}

func (a *sendActor) onProbe(m *probeResult) {
	a.look.inFlight = false
	if a.phase != phaseCollecting {
		return
	}
	switch {
	case m.err == nil && m.obs.Waiting:
		a.look.fruitless = 0
	case m.err == nil && m.obs.InputConsumed && m.obs.Drained:
		a.look.fruitless++
	}
	if m.err == nil && !m.obs.Supported {
		a.look.off = true
		if a.advance() {
			return
		}
		if code, ok := a.bs.PromptReady(); ok {
			// No proof to be had: the marker is the best evidence left.
			a.settle(messages.WaitStdinRead, &code, nil)
		}
		return
	}
	if m.seq <= a.look.fence {
		// From before the SIGINT landed: look again.
		a.requestProbe()
		return
	}
	if m.err == nil && a.onEvidence(m.obs) {
		return
	}
	if a.look.again {
		a.requestProbe()
		return
	}
	// Nothing new: look again later, backing off to pollIntervalMs.
	a.look.delay = max(a.look.delay*2, firstProbeDelay)
	if ceiling := messages.Ms(a.cfg.PollIntervalMs); a.look.delay > ceiling {
		a.look.delay = ceiling
	}
	a.arm(timerProbe, a.look.delay)
}

// onEvidence applies one observation; it reports whether that decided the
// next step (a settlement, a barrier, a confirming look).
func (a *sendActor) onEvidence(obs backend.StdinObservation) bool {
	if !exactEvidence(obs) {
		return false
	}
	a.ev.secret = obs.Secret
	if obs.Shell && a.sigint != sigintInFlight && a.advance() {
		// The shell reads again (its prompt, a continuation prompt, a
		// read builtin): the next line is typed.
		return true
	}
	if obs.Shell {
		// The shell waits with the input consumed and the output drained:
		// the newest marker, when the prompt completes it, is the last
		// command's. Without one, none is coming (the shell prints it
		// before it waits), so the shell's own wait settles the send at
		// once, without a status: a `read` builtin, a continuation prompt,
		// a replaced PROMPT_COMMAND.
		if code, ok := a.bs.PromptReady(); ok {
			a.settle(messages.WaitStdinRead, &code, nil)
			return true
		}
		if a.sigint == sigintInFlight {
			// A look from before the SIGINT landed: the interrupt's own
			// prompt (or its job) decides.
			a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
			return true
		}
	}
	if obs.EventLoop && !a.loopConfirmed(obs) {
		return true
	}
	if obs.HasWaitTimeout && obs.WaitTimeout <= shortWait {
		// The program waits, but only briefly: it resumes by itself when
		// its timeout ends (vim after an Escape waits for the rest of a
		// possible key code, in short slices, and redraws only then).
		// Look again after it, for at most shortWaitBudget: a program
		// that keeps ticking in short waits with nothing to show is
		// ready then.
		now := a.clock.Now()
		if a.look.shortSince.IsZero() {
			a.look.shortSince = now
		}
		if left := shortWaitBudget - now.Sub(a.look.shortSince); left > 0 {
			a.arm(timerProbe, min(obs.WaitTimeout, left)+time.Millisecond)
			return true
		}
	}
	if a.advance() {
		// A program took the line and reads again: the next is typed.
		return true
	}
	a.ev.reader = obs.Reader
	if sy, ok := a.bs.(backend.Syncer); ok {
		// The program waits; settle once the output it wrote before
		// waiting has gone through the pump. A barrier that is not
		// answered within a poll interval is asked again (a guard: one in
		// several thousand was seen to go unanswered under load).
		a.look.syncToken = sy.Sync()
		a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
		return true
	}
	a.settle(messages.WaitStdinRead, nil, nil)
	return true
}

// shortWait is the longest own timeout of a wait that is looked at again
// once it ended, before it counts as the program waiting for input; and
// shortWaitBudget bounds how long short waits are looked past in all. It
// exceeds a second because vim's default timeoutlen is exactly one: vim
// waits out that second in short slices after an Escape, then redraws.
const (
	shortWait       = time.Second
	shortWaitBudget = 1500 * time.Millisecond
)

// eventLoopConfirm is how long an epoll-only wait must hold, with the same
// threads and unchanged context switches, before it counts: an event loop
// may keep the terminal registered while it winds down (node after .exit
// sleeps ~15ms in epoll before exiting).
const eventLoopConfirm = 25 * time.Millisecond

// loopConfirmed reports whether an event-loop wait has held long enough,
// arming a look at the end of the window when it has not.
func (a *sendActor) loopConfirmed(obs backend.StdinObservation) bool {
	now := a.clock.Now()
	if a.look.loopSeen == nil || !maps.Equal(a.look.loopSeen, obs.Waiters) {
		a.look.loopSeen, a.look.loopAt = obs.Waiters, now
		a.arm(timerProbe, eventLoopConfirm)
		return false
	}
	if wait := eventLoopConfirm - now.Sub(a.look.loopAt); wait > 0 {
		a.arm(timerProbe, wait)
		return false
	}
	return true
}

// probeOnEvent probes after a write or output, except while the shell
// itself holds the terminal: then its prompt marker is the readiness
// signal, and waking the prober on every chunk of a shell command's output
// would only compete with the command for the CPU. One ioctl decides; the
// paced looks continue as the fallback for a shell whose marker is gone.
func (a *sendActor) probeOnEvent() {
	if !a.exact || a.look.off {
		return
	}
	if pgid, err := a.bs.Foreground(); err == nil && pgid == a.bs.PID() {
		if !a.look.inFlight && !a.look.paced {
			a.look.paced = true
			delay := messages.Ms(a.cfg.PollIntervalMs)
			if a.typing() {
				// A line is waiting for its turn: a shell that reads
				// again without a marker (a continuation prompt) or a
				// program that starts silently must not cost a poll
				// interval per line.
				delay = firstProbeDelay
			}
			a.arm(timerProbe, delay)
		}
		return
	}
	if a.look.fruitless >= fruitlessLimit {
		// A program streaming output: a look per chunk would walk /proc
		// on the pump for every read. Look once the output pauses.
		if !a.look.inFlight && !a.look.paced {
			a.look.paced = true
			a.arm(timerProbe, firstProbeDelay)
		}
		return
	}
	a.requestProbe()
}
