package actors

import (
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

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
	if a.phase != phaseCollecting || a.began == clearingForeign || f.Epoch != a.epoch {
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
	if a.intr.sigint == sigintReachedShell {
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
	if a.phase != phaseCollecting || a.in.stage == stageInFlight {
		return
	}
	if a.startup && !a.ev.outputSeen || a.typing() || a.req.Wait.NoSilence {
		// Zero-output silence never publishes a session; only the
		// deadline ends a silent startup. Silence before the last line
		// is typed does not end a send either.
		return
	}
	need := a.silenceNeed()
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
	if over := textcut.Tail(a.kept, a.cfg.MaxReadBytes); over > 0 {
		a.kept = append(a.kept[:0], a.kept[over:]...)
		a.ev.truncated = true
		from = max(from-over, 0)
	}
	return a.pattern.Match(append(a.kept[from:len(a.kept):len(a.kept)], pending...))
}
