package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// factsActor holds one session's readiness facts and runs the exact tier's
// looks. The backend reports every fact here (sessionEvents always targets
// it); the actor keeps the newest of each kind and passes each on to the
// send that subscribed, which alone decides what they mean. Facts outlive
// sends: a send that subscribes gets the newest ones replayed, so nothing
// the backend said before the send existed (the startup's first bytes, a
// prompt that raced the subscription) is lost, and waits that are not
// sends can read them later.
//
// It runs on the synchronized dispatcher like every actor here: a fact is
// handled in the goroutine that reported it (usually the output pump that
// has just parsed it), and so is the send it wakes and the look that send
// asks for. A hand-off to a fresh goroutine costs 10-25 us of scheduler
// wake-up per look. The one look that would run in a caller's goroutine
// (the first, from a send's start, inside Session.Send) is posted from a
// goroutine of its own: reading another process's memory takes its mmap
// lock, which a thread stuck in the kernel can hold, and a caller must never
// be held by that. A stuck look stalls only the exact tier (looks are one at
// a time); the send falls back to silence.
type factsActor struct {
	prober backend.StdinProber // nil until attached, or without an exact tier
	sub    *actor.PID          // the send that hears facts now

	// The newest fact of each kind.
	output *factOutput
	prompt *factPrompt
	exited *factExited
	obs    backend.StdinObservation // the newest look's observation
}

// Facts, as the backend reports them (through sessionEvents).
type (
	// factOutput: output collected for the send of epoch.
	factOutput struct{ epoch uint64 }
	factPrompt struct{ backend.PromptFact }
	factExited struct{ status messages.SessionStatus }
	factSynced struct{ token uint64 }
)

// Subscriptions and the exact tier's plumbing.
type (
	// subscribeFacts makes pid the send that hears facts; the newest ones
	// are replayed to it at once.
	subscribeFacts struct{ pid *actor.PID }
	// unsubscribeFacts ends pid's subscription, if it still holds it.
	unsubscribeFacts struct{ pid *actor.PID }
	// attachProber gives the actor the backend session's exact tier.
	attachProber struct{ prober backend.StdinProber }
	// probeRequest asks for one observation, answered with *probeResult.
	probeRequest struct{ seq uint64 }
	probeResult  struct {
		seq uint64
		obs backend.StdinObservation
		err error
	}
)

func (f *factsActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *factOutput:
		f.output = m
		f.pass(ctx, m)
	case *factPrompt:
		f.prompt = m
		f.pass(ctx, m)
	case *factSynced:
		f.pass(ctx, m)
	case *factExited:
		f.exited = m
		// The session owns the status; it hears first.
		ctx.Send(ctx.Parent(), m)
		f.pass(ctx, m)
	case *subscribeFacts:
		f.sub = m.pid
		if f.output != nil {
			f.pass(ctx, f.output)
		}
		if f.prompt != nil {
			f.pass(ctx, f.prompt)
		}
		if f.exited != nil {
			f.pass(ctx, f.exited)
		}
	case *unsubscribeFacts:
		if f.sub != nil && f.sub.Equal(m.pid) {
			f.sub = nil
		}
	case *attachProber:
		f.prober = m.prober
	case *probeRequest:
		obs, err := f.observe()
		if err == nil {
			f.obs = obs
		}
		ctx.Respond(&probeResult{seq: m.seq, obs: obs, err: err})
	}
}

// pass hands a fact to the subscribed send; with none, the fact is only
// kept.
func (f *factsActor) pass(ctx actor.Context, fact any) {
	if f.sub != nil {
		ctx.Send(f.sub, fact)
	}
}

// observe runs one look. A panic in a prober is answered as an error, so
// the asking send never waits for a result that cannot come and the exact
// tier keeps working for the next look.
func (f *factsActor) observe() (obs backend.StdinObservation, err error) {
	if f.prober == nil {
		return backend.StdinObservation{}, nil // Supported false: no exact tier
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: probe panicked: %v", messages.ErrTransport, r)
		}
	}()
	return f.prober.ProbeStdin()
}

// exactEvidence applies the evidence rule of SPEC §5.2 to one observation
// made after the write: a thread of the foreground group is blocked reading
// the terminal, all output was read and parsed (the viewport is complete),
// and the terminal's input queue is empty. An empty input queue after the
// write means the program's read returned that input, so a wait seen now
// was entered again after the write: a wait that existed before it never
// counts, and no probe is needed before the write (which keeps the write
// at the PTY's floor).
func exactEvidence(obs backend.StdinObservation) bool {
	return obs.Supported && obs.Waiting && obs.Drained && obs.InputConsumed
}

// sessionEvents adapts the backend's fact callbacks to messages for the
// session's facts actor. It never blocks: Send only enqueues.
type sessionEvents struct {
	sys   *actor.ActorSystem
	facts *actor.PID
}

var _ backend.Events = (*sessionEvents)(nil)

func (e *sessionEvents) Output(epoch uint64)             { e.sys.Root.Send(e.facts, &factOutput{epoch}) }
func (e *sessionEvents) Prompt(f backend.PromptFact)     { e.sys.Root.Send(e.facts, &factPrompt{f}) }
func (e *sessionEvents) Exited(s messages.SessionStatus) { e.sys.Root.Send(e.facts, &factExited{s}) }
func (e *sessionEvents) Synced(t uint64)                 { e.sys.Root.Send(e.facts, &factSynced{t}) }
