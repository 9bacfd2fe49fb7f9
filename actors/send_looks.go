package actors

import (
	"maps"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

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
	if !a.exact || a.look.off || a.phase != phaseCollecting || a.startup || a.in.stage != stageDone || a.look.syncToken != 0 {
		return
	}
	if a.look.flight != lookIdle {
		a.look.flight = lookAskedAgain
		return
	}
	a.look.flight = lookAsked
	a.look.seq++
	req, facts, self, sys := &probeRequest{seq: a.look.seq}, a.facts, a.self, a.sys
	if a.run == inCaller {
		// start runs in the caller's goroutine (inside Session.Send):
		// a probe stuck in the kernel must never hold that goroutine,
		// whose context could not end the wait.
		go sys.Root.RequestWithCustomSender(facts, req, self)
		return
	}
	sys.Root.RequestWithCustomSender(facts, req, self)
}

func (a *sendActor) onProbe(m *probeResult) {
	again := a.look.flight == lookAskedAgain
	a.look.flight = lookIdle
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
	if again {
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
	a.ev.secretPrompt = nil
	if obs.Secret {
		a.ev.secretPrompt = &messages.SecretPrompt{Session: a.session, Pgid: obs.Pgid, TID: obs.ReaderTID,
			InputSeq: obs.InputSeq, Reader: obs.Reader}
	}
	if obs.Shell && a.onShellWait() {
		return true
	}
	if obs.EventLoop && !a.loopConfirmed(obs) {
		return true
	}
	if a.waitsBriefly(obs) {
		return true
	}
	if a.advance() {
		// A program took the line and reads again: the next is typed.
		return true
	}
	a.onProgramWait(obs)
	return true
}

// onShellWait applies a look that shows the shell itself reading the
// terminal; it reports whether that decided the next step.
func (a *sendActor) onShellWait() bool {
	if a.intr.sigint != sigintInFlight && a.advance() {
		// The shell reads again (its prompt, a continuation prompt, a
		// read builtin): the next line is typed.
		return true
	}
	// The shell waits with the input consumed and the output drained:
	// the newest marker, when the prompt completes it, is the last
	// command's. Without one, none is coming (the shell prints it before
	// it waits), so the shell's own wait settles the send at once,
	// without a status: a `read` builtin, a continuation prompt, a
	// replaced PROMPT_COMMAND.
	if code, ok := a.bs.PromptReady(); ok {
		a.settle(messages.WaitStdinRead, &code, nil)
		return true
	}
	if a.intr.sigint == sigintInFlight {
		// A look from before the SIGINT landed: the interrupt's own
		// prompt (or its job) decides.
		a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
		return true
	}
	if a.intr.sigint == sigintReachedShell && a.intr.shellWakes < maxShellWakes {
		// The shell took the cancel's SIGINT and waits without a new
		// prompt: bash may hold the interrupt, to act on it inside the
		// next send's line (backend.ShellWaker). Wake it once; its
		// prompt, or the same wait again, settles the send.
		if w, ok := a.bs.(backend.ShellWaker); ok {
			a.intr.shellWakes++
			if err := w.WakeShell(); err != nil {
				a.log.Debug().Err(err).Uint64("ticket", a.ticket).Msg("cancel: waking the shell")
			}
			a.look.fence = a.look.seq
			a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
			return true
		}
	}
	return false
}

// onProgramWait settles on a program proven to wait for input: once the
// output it wrote before waiting has gone through the pump, where the
// backend offers that barrier.
func (a *sendActor) onProgramWait(obs backend.StdinObservation) {
	a.ev.reader = obs.Reader
	if sy, ok := a.bs.(backend.Syncer); ok {
		// A barrier that is not answered within a poll interval is asked
		// again (a guard: one in several thousand was seen to go
		// unanswered under load).
		a.look.syncToken = sy.Sync()
		a.arm(timerProbe, messages.Ms(a.cfg.PollIntervalMs))
		return
	}
	a.settle(messages.WaitStdinRead, nil, nil)
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

// waitsBriefly reports whether the program waits only briefly, with its
// own short timeout: it resumes by itself when that ends (vim after an
// Escape waits for the rest of a possible key code, in short slices, and
// redraws only then). It then arms a look after the timeout, for at most
// shortWaitBudget in all: a program that keeps ticking in short waits
// with nothing to show is ready then.
func (a *sendActor) waitsBriefly(obs backend.StdinObservation) bool {
	if !obs.HasWaitTimeout || obs.WaitTimeout > shortWait {
		return false
	}
	now := a.clock.Now()
	if a.look.shortSince.IsZero() {
		a.look.shortSince = now
	}
	left := shortWaitBudget - now.Sub(a.look.shortSince)
	if left <= 0 {
		return false
	}
	a.arm(timerProbe, min(obs.WaitTimeout, left)+time.Millisecond)
	return true
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
		if a.look.flight == lookIdle && !a.look.paced {
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
		if a.look.flight == lookIdle && !a.look.paced {
			a.look.paced = true
			a.arm(timerProbe, firstProbeDelay)
		}
		return
	}
	a.requestProbe()
}
