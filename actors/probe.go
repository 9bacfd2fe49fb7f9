package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/messages"
)

// probeActor runs the exact tier's observations for one session. Unlike the
// other actors it keeps protoactor's goroutine dispatcher: a probe reads
// /proc, and reading another process's memory takes its mmap lock, which a
// thread stuck in the kernel (a page fault on a hung network filesystem)
// can hold for ever. Run inline, such a probe would stall the goroutine
// that asked (the output pump, or a caller inside Send) and with it the
// session's mailbox; on its own goroutine it stalls only the exact tier,
// and the send falls back to silence. The asker yields right after posting
// (see requestProbe), so the probe still runs at once on the same
// processor instead of waiting for another thread to wake up.
type probeActor struct{ prober messages.StdinProber }

// probeRequest asks for one observation, answered with *probeResult to the
// sender.
type probeRequest struct{ seq uint64 }

type probeResult struct {
	seq uint64
	obs messages.StdinObservation
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
func (p *probeActor) observe() (obs messages.StdinObservation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: probe panicked: %v", messages.ErrTransport, r)
		}
	}()
	return p.prober.ProbeStdin()
}

func probeProps(p messages.StdinProber) *actor.Props {
	a := &probeActor{prober: p}
	return actor.PropsFromProducer(func() actor.Actor { return a })
}

// exactEvidence applies the evidence rule of SPEC §5.2 to one observation
// made after the write: a thread of the foreground group is blocked reading
// the terminal, all output was read and parsed (the viewport is complete),
// and the terminal's input queue is empty. An empty input queue after the
// write means the program's read returned that input, so a wait seen now
// was entered again after the write: a wait that existed before it never
// counts, and no probe is needed before the write (which keeps the write
// at the PTY's floor).
func exactEvidence(obs messages.StdinObservation) bool {
	return obs.Supported && obs.Waiting && obs.Drained && obs.InputConsumed
}
