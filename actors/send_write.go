package actors

// The writer: the request's input as bytes (at once, pasted, or typed line
// by line) and its way to the terminal. How a write ended is decided above,
// in onWriteDone (send_written.go), which the writer reports to.

import (
	"context"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/backend"
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
		a.in.lines = lines[1:]
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
// writeDone, inline (to in.done) or from the goroutine.
func (a *sendActor) writeChunk(data []byte) {
	a.in.stage = stageInFlight
	if tw, ok := a.bs.(backend.TryWriter); ok && (a.in.gate.Load() == gateRunning || a.in.gate.CompareAndSwap(gateOpen, gateRunning)) {
		n, err := tw.TryWrite(data)
		if err != nil || n == len(data) {
			a.in.done(&writeDone{err: err})
			return
		}
		data = data[n:]
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.in.abandon = cancel
	self, sys, bs, gate := a.self, a.sys, a.bs, &a.in.gate
	go func() {
		if gate.Load() != gateRunning && !gate.CompareAndSwap(gateOpen, gateRunning) {
			sys.Root.Send(self, &writeDone{skipped: true})
			return
		}
		err := bs.Write(wctx, data)
		sys.Root.Send(self, &writeDone{err: err})
	}()
}

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
	if a.in.stage != stageDone || a.phase != phaseCollecting {
		return true
	}
	data := a.in.lines[0]
	a.in.lines = a.in.lines[1:]
	if a.look.off {
		for _, l := range a.in.lines {
			data = append(data, l...)
		}
		a.in.lines = nil
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
