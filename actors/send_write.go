package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

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
	a.recordStart()
	deadline := messages.Ms(a.cfg.TimeoutMs)
	if a.req.Wait.Timeout > 0 {
		deadline = a.req.Wait.Timeout
	}
	a.arm(timerDeadline, deadline-a.clock.Now().Sub(a.started))
	// Input nobody sent that waits for the shell at its prompt goes
	// first, so this send's line runs as written; the result says what it
	// was. Looked at before BeginSend, which forgets the prompt.
	if c, ok := a.bs.(backend.ForeignInputClearer); ok && a.exact && !a.startup && !a.isWait() {
		foreign, clear, busy := c.ClearForeignInput(false)
		a.foreign = foreign
		if busy {
			a.awaitClear(c)
			return
		}
		a.begin(clear)
		return
	}
	a.begin(nil)
}

// begin begins the send's epoch (or continues the previous one for a
// wait) and writes, clear (the foreign input's erasure) first.
func (a *sendActor) begin(clear []byte) {
	a.begun = true
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
	a.armSilence()
	switch {
	case a.startup:
		// The startup wait writes nothing.
	case a.isWait():
		// Nothing to write: the send asks whether the program waits.
		a.write = stageDone
		a.requestProbe()
	default:
		a.writeInput(clear)
	}
}

// foreignRetry is how often a send asks again whether the shell took the
// foreign input it found, for at most foreignWait; past that the input is
// written without the erasure (as before the clear existed).
const (
	foreignRetry = 5 * time.Millisecond
	foreignWait  = 2 * time.Second
	// maxForeignReport bounds what the result reports discarded over the
	// clearer's retries (each bounds its own).
	maxForeignReport = 1 << 10
)

// awaitClear waits, off the mailbox, until the shell has taken the foreign
// input the first look found it still reading (ClearForeignInput reported
// busy): a goroutine asks again every foreignRetry and reports with
// foreignCleared; the send begins then. The write counts as in flight
// meanwhile, so the session keeps the slot: a cancel closes the gate and
// nothing is written (the goroutine reports the skip), a settle (the
// deadline) does the same.
func (a *sendActor) awaitClear(c backend.ForeignInputClearer) {
	a.write, a.clearing = stageInFlight, true
	wctx, cancel := context.WithCancel(context.Background())
	a.cancelW = cancel
	self, sys, gate, clock := a.self, a.sys, &a.gate, a.clock
	go func() {
		m := &foreignCleared{}
		deadline := clock.Now().Add(foreignWait)
		for {
			wake := make(chan struct{})
			t := clock.AfterFunc(foreignRetry, func() { close(wake) })
			select {
			case <-wctx.Done():
				t.Stop()
				m.abandoned = true
			case <-wake:
				if gate.Load() == gateClosed {
					m.abandoned = true
					break
				}
				text, keys, busy := c.ClearForeignInput(true)
				m.foreign += text
				if busy && clock.Now().Before(deadline) {
					continue
				}
				m.keys, m.timedOut = keys, busy
			}
			break
		}
		sys.Root.Send(self, m)
	}()
}

// onForeignCleared begins the send whose start waited for the clear.
func (a *sendActor) onForeignCleared(m *foreignCleared) {
	f := a.foreign + m.foreign
	a.foreign = f[:textcut.Head(f, maxForeignReport)]
	if a.takenOver && !a.settled() {
		a.clearing, a.write = false, stageAborted // never begun: nothing written
		a.afterTakeOver()
		return
	}
	if m.abandoned || a.gate.Load() == gateClosed || a.settled() {
		a.write = stageAborted
		a.settle("", nil, messages.ErrAbortedBeforeWrite) // still clearing: nothing began
		a.clearing = false
		return
	}
	a.clearing, a.write = false, stageNotYet
	if m.timedOut {
		a.log.Debug().Dur("after", foreignWait).Msg("the shell did not take the foreign input; the send is written without clearing it")
	}
	a.begin(m.keys)
}

// writeInput writes the request's input after clear (the foreign input's
// erasure): all at once, pasted, or its first line when it is typed line
// by line; named keys go last.
func (a *sendActor) writeInput(clear []byte) {
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
	case a.takenOver && (m.skipped || errors.Is(m.err, context.Canceled)):
		// The person's take-over abandoned the write: what was written
		// stays, the rest never is.
		a.write = stageDone
		if m.skipped {
			a.write = stageAborted
		}
		a.afterTakeOver()
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
		if a.takenOver {
			a.afterTakeOver()
			return
		}
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
func (a *sendActor) typing() bool { return len(a.lines) > 0 && !a.cancelled && !a.takenOver }

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
