package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// probeActor runs the exact tier's observations for one session. A probe
// reads a handful of /proc files and polls two descriptors; like the other
// actors it runs on the synchronized dispatcher, in the goroutine that
// asked. After output that is the pump that just parsed it, the moment a
// program that printed its prompt has blocked again; a hand-off to a fresh
// goroutine cost 10-25 us of scheduler wake-up on every look, and yielding
// to one slowed the whole process. The one look that would otherwise run
// in a caller's goroutine (the first, from start, inside Service.Send) is
// posted from a goroutine of its own: reading another process's memory
// takes its mmap lock, which a thread stuck in the kernel can hold, and a
// caller must never be held by that. A stuck look stalls only the exact
// tier (looks are one at a time); the send falls back to silence.
type probeActor struct{ prober backend.StdinProber }

// probeRequest asks for one observation, answered with *probeResult to the
// sender.
type probeRequest struct{ seq uint64 }

type probeResult struct {
	seq uint64
	obs backend.StdinObservation
	err error
}

func (p *probeActor) Receive(ctx actor.Context) {
	if m, ok := ctx.Message().(*probeRequest); ok {
		obs, err := p.observe()
		ctx.Respond(&probeResult{seq: m.seq, obs: obs, err: err})
	}
}

// observe runs one probe. A panic in a prober is answered as an error, so
// the asking send never waits for a result that cannot come and the exact
// tier keeps working for the next look.
func (p *probeActor) observe() (obs backend.StdinObservation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: probe panicked: %v", messages.ErrTransport, r)
		}
	}()
	return p.prober.ProbeStdin()
}

func probeProps(p backend.StdinProber) *actor.Props {
	return props(&probeActor{prober: p})
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
