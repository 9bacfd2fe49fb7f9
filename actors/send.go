package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// Write states shared between the send actor and its write goroutine, so a
// cancel that wins the race guarantees the input is never written.
const (
	writePending int32 = iota
	writeRunning
	writeCancelled
)

// sendActor owns one in-flight send: it writes the input, tracks the
// readiness facts and settles exactly once. It is the only place that
// decides why a send returned.
type sendActor struct {
	ticket  uint64
	session messages.SessionID
	req     messages.SendRequest
	startup bool // the session's startup wait: no write, silence needs output
	bs      backend.Session
	cfg     messages.Config
	clock   Clock
	log     zerolog.Logger
	started time.Time

	self *actor.PID
	sys  *actor.ActorSystem

	epoch        uint64
	writeState   atomic.Int32
	writeCancel  context.CancelFunc
	writing      bool // the write goroutine has not reported
	interrupting bool // a SIGINT goroutine has not reported
	wrote        bool // the input reached the terminal
	cancelled    bool
	markerSeen   bool
	outputSeen   bool
	lastActivity time.Time
	truncated    bool

	timers       [timerKinds]Timer
	timerGen     [timerKinds]uint64
	silenceArmed bool
	parentPID    *actor.PID
	drainedSent  bool
	frozen       bool // closing: only the teardown's session_exit settles

	settled bool
	result  messages.SendResult
	err     error

	// subscribers hear the settlement straight from this actor (one hop
	// fewer than through the session).
	subscribers []*actor.PID
	// prewrite is set when the session already began the send and wrote
	// (some of) the input inline at reservation, one hop earlier than this
	// actor could.
	prewrite         *prewrite
	drainingAtSettle bool

	// The exact tier.
	probe      *actor.PID // nil: the backend has no exact tier
	probing    bool       // a probe request is in flight
	probeAgain bool       // something happened while it was in flight
	probeSeq   uint64
	probeDelay time.Duration
	exactOff   bool // the platform has no exact tier
	reader     string
	syncToken  uint64 // the exact tier is waiting for this output barrier
	probePaced bool   // a paced look is armed instead of a look per output event
	// fruitless counts looks in a row that walked the group (input
	// consumed, output drained) and found nobody waiting: the program is
	// producing output. Past fruitlessLimit, output no longer triggers a
	// look each; a paced look follows instead.
	fruitless int
	// starting: start is running, in the goroutine of the caller that
	// reserved the send.
	starting bool
	// interruptedShell: the cancel's SIGINT reached the shell's own group,
	// so the command's job may not have started yet.
	interruptedShell bool
	loopSeen         map[int]uint64 // event-loop waiters (and switches) first seen at loopAt
	loopAt           time.Time
	// free is shared with the session: set when the send settled with
	// nothing in flight, so the session can accept the next send even
	// before sendFinished reaches it.
	free *atomic.Bool
	// idle is shared with the session: set, before free, when the send
	// settled on proof that the program waits for input with all of it
	// consumed, so the next send is written to an idle terminal.
	idle *atomic.Bool
	// markerNeedsProof: a prompt marker alone does not show this send's
	// input ran to its end, because the input holds more than one line
	// (each line's command prints its own marker) or the terminal was not
	// proven idle when it was written (a command left running by an
	// earlier send prints its marker before the shell reads this input).
	// The marker then settles only with the exact tier's proof that the
	// shell waits with the input consumed and the output drained.
	markerNeedsProof bool
}

func (a *sendActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.sys, a.parentPID = ctx.Self(), ctx.ActorSystem(), ctx.Parent()
		a.start()
	case *factOutput:
		if !a.settled {
			a.outputSeen = true
			a.lastActivity = a.clock.Now()
			a.armSilence()
			// Output means the program ran: look again soon, from the
			// shortest interval.
			a.probeDelay = 0
			a.probeOnEvent()
		}
	case *probeResult:
		a.onProbe(m)
	case *factSynced:
		if !a.settled && !a.frozen && a.syncToken != 0 && m.token == a.syncToken {
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
		a.settle(messages.WaitSessionExit, nil, nil)
	case *forceSettle:
		a.settle(m.reason, nil, nil)
	case *freeze:
		a.frozen = true
		a.stopTimers()
	case *writeDone:
		a.onWriteDone(m)
		if a.settled && !a.interrupting {
			a.free.Store(true)
		}
	case *interruptDone:
		a.interrupting = false
		if a.settled {
			a.free.Store(true)
		}
		// A SIGINT that reached the shell itself may have landed before
		// the command's job took the terminal (bash takes it and starts
		// the job anyway): watch for the job and interrupt it too.
		a.interruptedShell = m.err == nil && m.pgid == a.bs.PID()
		if a.interruptedShell && !a.settled {
			a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
		}
		// A foreground group that exited before the SIGINT landed left
		// nothing to interrupt: the shell's prompt settles the send.
		if m.err != nil && !a.settled && !errors.Is(m.err, messages.ErrNoForeground) {
			a.settle("", nil, fmt.Errorf("%w: interrupt: %w", messages.ErrTransport, m.err))
		}
		a.maybeStop(ctx)
	case *timerFired:
		if m.gen == a.timerGen[m.kind] {
			a.onTimer(m.kind)
		}
	case *CancelSend:
		ctx.Respond(&CancelSendReply{Accepted: a.cancel()})
	case *ReadSendOutput:
		ctx.Respond(a.readOutput())
	case *AwaitSend:
		if a.settled {
			ctx.Respond(a.settledMsg())
		} else {
			a.subscribers = append(a.subscribers, ctx.Sender())
		}
	case *actor.Stopping:
		a.stopTimers()
		if a.writeCancel != nil {
			a.writeCancel()
		}
	}
	a.maybeStop(ctx)
}

// prewrite is what the session did before spawning the send actor.
type prewrite struct {
	epoch   uint64
	written int
	err     error
	tried   bool // a TryWrite was attempted (the write state is running)
}

// begin starts the send's epoch and writes what the terminal accepts now.
// The session calls it at reservation, before the actor exists, so the
// input reaches the program without waiting for the actor to be scheduled.
func (a *sendActor) begin() {
	p := &prewrite{epoch: a.bs.BeginSend()}
	a.prewrite = p
	data := a.input()
	tw, ok := a.bs.(backend.TryWriter)
	if len(data) == 0 || !ok || !a.writeState.CompareAndSwap(writePending, writeRunning) {
		return
	}
	p.tried = true
	p.written, p.err = tw.TryWrite(data)
}

func (a *sendActor) input() []byte {
	data := []byte(a.req.Text)
	if a.req.Submit {
		data = append(data, a.bs.Enter()...)
	}
	return data
}

func (a *sendActor) start() {
	a.starting = true
	defer func() { a.starting = false }()
	a.lastActivity = a.clock.Now()
	switch {
	case a.prewrite != nil:
		a.epoch = a.prewrite.epoch
	case !a.startup:
		// The startup wait uses epoch 0, which a new backend session
		// collects from its first byte; every later send starts a new one.
		a.epoch = a.bs.BeginSend()
	}
	a.arm(timerDeadline, messages.Ms(a.cfg.TimeoutMs)-a.clock.Now().Sub(a.started))
	a.armSilence()
	data := a.input()
	if a.startup {
		return
	}
	if len(data) == 0 {
		// Nothing to write: the send asks whether the program waits.
		a.wrote = true
		a.requestProbe()
		return
	}
	a.writing = true
	// Most input fits the terminal's queue and was written inline; only a
	// remainder goes to a blocking writer.
	if p := a.prewrite; p != nil && p.tried {
		if p.err != nil || p.written == len(data) {
			a.onWriteDone(&writeDone{err: p.err})
			return
		}
		data = data[p.written:]
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.writeCancel = cancel
	self, sys, bs := a.self, a.sys, a.bs
	go func() {
		if a.writeState.Load() != writeRunning && !a.writeState.CompareAndSwap(writePending, writeRunning) {
			sys.Root.Send(self, &writeDone{skipped: true})
			return
		}
		err := bs.Write(wctx, data)
		sys.Root.Send(self, &writeDone{err: err})
	}()
}

func (a *sendActor) onWriteDone(m *writeDone) {
	a.writing = false
	if a.writeCancel != nil {
		a.writeCancel()
	}
	switch {
	case m.skipped:
		a.settle("", nil, messages.ErrAbortedBeforeWrite)
	case m.err != nil && a.cancelled && errors.Is(m.err, context.Canceled):
		// cancel abandoned the write: some of the input may have reached
		// the program, so it gets the SIGINT a written send gets.
		a.wrote = true
		if !a.settled {
			a.interrupt()
		}
	case m.err != nil:
		a.settle("", nil, fmt.Errorf("%w: write: %w", messages.ErrTransport, m.err))
	default:
		a.wrote = true
		a.lastActivity = a.clock.Now()
		a.armSilence()
		if a.cancelled && !a.settled {
			a.interrupt()
		}
		a.probeOnEvent()
	}
}

// cancel requests cancellation. Input that was not yet written never is;
// otherwise a real SIGINT goes to the foreground group once the write
// settled. The send then settles through the normal tiers.
func (a *sendActor) cancel() bool {
	if a.settled || a.cancelled {
		return !a.settled
	}
	a.cancelled = true
	if a.writeState.CompareAndSwap(writePending, writeCancelled) {
		if !a.writing {
			a.settle("", nil, messages.ErrAbortedBeforeWrite)
		}
		return true
	}
	if a.writing {
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
	if a.writing && a.writeCancel != nil {
		a.writeCancel()
	}
}

func (a *sendActor) interrupt() {
	a.interrupting = true
	// Evidence from before the signal (the prompt of a command that had
	// already finished) no longer settles the send: the interrupt's own
	// prompt will, and it is not left to be credited to the next send.
	a.epoch = a.bs.RearmPrompt()
	a.markerSeen = false
	self, sys, bs := a.self, a.sys, a.bs
	go func() {
		res, err := bs.Signal(messages.SIGINT)
		sys.Root.Send(self, &interruptDone{pgid: res.TargetPgid, err: err})
	}()
	// The interrupt's effect (a new prompt) must be observed as new evidence.
	a.lastActivity = a.clock.Now()
	a.arm(timerPoll, 0)
}

// needsProof reports whether a marker must wait for the exact tier's proof
// (markerNeedsProof) and the platform can give it.
func (a *sendActor) needsProof() bool {
	return a.markerNeedsProof && a.probe != nil && !a.exactOff
}

// multiLine reports whether the request's input submits a line and then
// carries more: another line (the Enter of a submit ends one too), or text
// typed after it. It reads the request as is, without building the input.
func multiLine(req messages.SendRequest) bool {
	i := strings.IndexAny(req.Text, "\r\n")
	return i >= 0 && (req.Submit || i < len(req.Text)-1)
}

func (a *sendActor) onPrompt(f backend.PromptFact) {
	if a.settled || a.frozen || f.Epoch != a.epoch {
		return
	}
	if f.ShellForeground && !a.needsProof() {
		code := f.ExitCode
		a.settle(messages.WaitStdinRead, &code, nil)
		return
	}
	if f.ShellForeground {
		// The probe decides; its proof takes the marker's status.
		a.markerSeen = true
		a.armSilence()
		a.requestProbe()
		return
	}
	// Marker seen but the terminal is not handed back yet: re-check every
	// poll interval; silence waits the hand-off grace on top.
	a.markerSeen = true
	a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
	a.armSilence()
}

func (a *sendActor) onTimer(k timerKind) {
	if a.settled || a.frozen {
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
		if code, ok := a.bs.PromptReady(); ok && !a.needsProof() {
			a.settle(messages.WaitStdinRead, &code, nil)
			return
		} else if ok {
			a.requestProbe()
		}
		if a.interruptedShell && !a.interrupting {
			if pgid, err := a.bs.Foreground(); err == nil && pgid != a.bs.PID() {
				a.log.Debug().Uint64("ticket", a.ticket).Int("pgid", pgid).Msg("cancel: the job started after the SIGINT reached the shell; interrupting it")
				a.interruptedShell = false
				a.interrupt()
				return
			}
			a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
			return
		}
		if a.markerSeen {
			a.arm(timerPoll, messages.Ms(a.cfg.PollIntervalMs))
		}
	case timerSilence:
		a.silenceArmed = false
		a.armSilence()
	case timerProbe:
		a.probePaced = false
		if a.syncToken != 0 {
			a.syncToken = a.bs.(backend.Syncer).Sync()
			a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
			return
		}
		a.requestProbe()
	}
}

// armSilence (re)arms the silence check for the remaining quiet time, or
// settles when the session has been quiet long enough.
func (a *sendActor) armSilence() {
	if a.settled || a.writing || a.frozen {
		return
	}
	if a.startup && !a.outputSeen {
		// Zero-output silence never publishes a session; only the
		// deadline ends a silent startup.
		return
	}
	need := messages.Ms(a.cfg.IdleSilenceMs)
	if a.markerSeen {
		need += messages.Ms(a.cfg.HandoffGraceMs)
	}
	quiet := a.clock.Now().Sub(a.lastActivity)
	if quiet >= need {
		a.settle(messages.WaitInferredIdle, nil, nil)
		return
	}
	if !a.silenceArmed {
		// A pending check that fires early simply re-arms: activity only
		// moves lastActivity forward.
		a.silenceArmed = true
		a.arm(timerSilence, need-quiet)
	}
}

func (a *sendActor) arm(k timerKind, d time.Duration) {
	if a.timers[k] != nil {
		a.timers[k].Stop()
	}
	a.timerGen[k]++
	gen, self, sys := a.timerGen[k], a.self, a.sys
	if d < 0 {
		d = 0
	}
	a.timers[k] = a.clock.AfterFunc(d, func() { sys.Root.Send(self, &timerFired{kind: k, gen: gen}) })
}

func (a *sendActor) stopTimers() {
	for i, t := range a.timers {
		if t != nil {
			t.Stop()
			a.timers[i] = nil
		}
		a.timerGen[i]++
	}
	a.silenceArmed = false
}

func (a *sendActor) readOutput() *ReadSendOutputReply {
	if a.settled {
		return &ReadSendOutputReply{Settled: true}
	}
	r := a.bs.TakeOutput()
	a.truncated = a.truncated || r.Truncated
	return &ReadSendOutputReply{Read: r}
}

// settle fixes the send's outcome once. After it, output reaches only
// scrollback.
func (a *sendActor) settle(reason messages.WaitReason, code *int, err error) {
	if a.settled {
		return
	}
	a.settled = true
	a.stopTimers()
	out := a.bs.TakeOutput()
	a.bs.EndSend()
	a.result = messages.SendResult{
		Viewport:   out.Delta,
		WaitReason: reason,
		Status:     a.bs.Status(),
		Truncated:  a.truncated || out.Truncated,
		ExitCode:   code,
		Reader:     a.reader,
		Elapsed:    a.clock.Now().Sub(a.started),
	}
	a.err = err
	if err != nil {
		a.log.Debug().Err(err).Uint64("ticket", a.ticket).Msg("send failed")
	}
	draining := a.writing || a.interrupting
	a.drainingAtSettle = draining
	if a.idle != nil && reason == messages.WaitStdinRead && err == nil && !draining {
		a.idle.Store(true)
	}
	if !draining {
		a.free.Store(true)
	}
	a.sys.Root.Send(a.parentPID, &sendFinished{ticket: a.ticket, result: a.result, err: err, draining: draining})
	msg := a.settledMsg()
	for _, p := range a.subscribers {
		a.sys.Root.Send(p, msg)
	}
	a.subscribers = nil
}

func (a *sendActor) settledMsg() *SendSettled {
	return &SendSettled{Session: a.session, Ticket: a.ticket, Result: a.result, Err: a.err}
}

// maybeStop tells the session once a send that settled while draining has
// nothing in flight; the session keeps the slot until then, so the next
// send sees no late bytes or signals. The session retires this actor with a
// poison pill (never Stop, which would drop requests already queued here).
func (a *sendActor) maybeStop(ctx actor.Context) {
	if a.settled && a.drainingAtSettle && !a.writing && !a.interrupting && !a.drainedSent {
		a.drainedSent = true
		ctx.Send(a.parentPID, &sendDrained{ticket: a.ticket})
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

// requestProbe asks the probe actor for an observation, one at a time.
func (a *sendActor) requestProbe() {
	if a.probe == nil || a.exactOff || a.settled || a.frozen || a.startup || !a.wrote || a.syncToken != 0 {
		return
	}
	if a.probing {
		a.probeAgain = true
		return
	}
	a.probing, a.probeAgain = true, false
	a.probeSeq++
	req, probe, self, sys := &probeRequest{seq: a.probeSeq}, a.probe, a.self, a.sys
	if a.starting {
		// start runs in the caller's goroutine (inside Service.Send):
		// a probe stuck in the kernel must never hold that goroutine,
		// whose context could not end the wait.
		go sys.Root.RequestWithCustomSender(probe, req, self)
		return
	}
	sys.Root.RequestWithCustomSender(probe, req, self)
}

func (a *sendActor) onProbe(m *probeResult) {
	a.probing = false
	if a.settled || a.frozen {
		return
	}
	switch {
	case m.err == nil && m.obs.Waiting:
		a.fruitless = 0
	case m.err == nil && m.obs.InputConsumed && m.obs.Drained:
		a.fruitless++
	}
	if m.err == nil && !m.obs.Supported {
		a.exactOff = true
		if code, ok := a.bs.PromptReady(); ok && a.markerNeedsProof {
			// No proof to be had: the marker is the best evidence left.
			a.settle(messages.WaitStdinRead, &code, nil)
		}
		return
	}
	if m.err == nil {
		if exactEvidence(m.obs) && m.obs.Shell {
			// The shell waits with the input consumed and the output
			// drained: the newest marker, when the prompt completes it,
			// is the last command's. Without one, none is coming (the
			// shell prints it before it waits), so the shell's own wait
			// settles the send at once, without a status: a `read`
			// builtin, a continuation prompt, a replaced PROMPT_COMMAND.
			if code, ok := a.bs.PromptReady(); ok {
				a.settle(messages.WaitStdinRead, &code, nil)
				return
			}
			if a.interrupting {
				// A look from before the SIGINT landed: the interrupt's
				// own prompt (or its job) decides.
				a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
				return
			}
		}
		if exactEvidence(m.obs) && m.obs.EventLoop && !a.loopConfirmed(m.obs) {
			return
		}
		if exactEvidence(m.obs) {
			a.reader = m.obs.Reader
			if sy, ok := a.bs.(backend.Syncer); ok {
				// The program waits; settle once the output it wrote
				// before waiting has gone through the pump. A barrier
				// that is not answered within a poll interval is asked
				// again (a guard: one in several thousand was seen to
				// go unanswered under load).
				a.syncToken = sy.Sync()
				a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
				return
			}
			a.settle(messages.WaitStdinRead, nil, nil)
			return
		}
	}
	if a.probeAgain {
		a.requestProbe()
		return
	}
	// Nothing new: look again later, backing off to pollIntervalMs.
	if a.probeDelay < firstProbeDelay {
		a.probeDelay = firstProbeDelay
	} else {
		a.probeDelay *= 2
	}
	if max := messages.Ms(a.cfg.PollIntervalMs); a.probeDelay > max {
		a.probeDelay = max
	}
	a.arm(timerProbe, a.probeDelay)
}

// eventLoopConfirm is how long an epoll-only wait must hold, with the same
// threads and unchanged context switches, before it counts: an event loop
// may keep the terminal registered while it winds down (node after .exit
// sleeps ~15ms in epoll before exiting).
const eventLoopConfirm = 25 * time.Millisecond

// loopConfirmed reports whether an event-loop wait has held long enough,
// arming a look at the end of the window when it has not.
func (a *sendActor) loopConfirmed(obs backend.StdinObservation) bool {
	now := a.clock.Now()
	if a.loopSeen == nil || !maps.Equal(a.loopSeen, obs.Waiters) {
		a.loopSeen, a.loopAt = obs.Waiters, now
		a.arm(timerProbe, eventLoopConfirm)
		return false
	}
	if wait := eventLoopConfirm - now.Sub(a.loopAt); wait > 0 {
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
	if a.probe == nil || a.exactOff {
		return
	}
	if pgid, err := a.bs.Foreground(); err == nil && pgid == a.bs.PID() {
		if !a.probing && !a.probePaced {
			a.probePaced = true
			a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
		}
		return
	}
	if a.fruitless >= fruitlessLimit {
		// A program streaming output: a look per chunk would walk /proc
		// on the pump for every read. Look once the output pauses.
		if !a.probing && !a.probePaced {
			a.probePaced = true
			a.arm(timerProbe, firstProbeDelay)
		}
		return
	}
	a.requestProbe()
}
