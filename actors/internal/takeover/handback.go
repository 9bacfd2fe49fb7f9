package takeover

import (
	"math"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// holdLog is what people did during a hold.
type holdLog struct {
	people              []string
	since               time.Time
	fromSeq, fromCursor uint64
	lines               []messages.TypedLine
	editor              lineEditor
}

// maxHandbackLines bounds the lines a summary keeps (the newest).
const maxHandbackLines = 200

// handBack gives the input back to the agent and sums the hold up for
// the agent's next result.
func (c *Takeover) handBack(reason string) messages.Handback {
	now := c.clock.Now()
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	c.state = messages.Control{Holder: messages.AgentHolder, Since: now, Epoch: c.state.Epoch + 1}
	c.dropPersonInput()
	seq := c.noteControl(reason, false)
	hb := c.summary(reason, now, seq)
	c.hold = nil
	if send := c.session.InFlight(); send.Agent && !send.Settled {
		// A send (a wait: no other runs while people hold the input) is
		// in flight: its result is the agent's next.
		note := hb
		c.session.NoteHandback(&note)
	} else {
		c.pending = Join(c.pending, &hb)
	}
	c.sys.EventStream.Publish(&protocol.EventControlChanged{Owner: c.owner, Session: c.id, Control: c.state, Handback: &hb})
	return hb
}

// summary is the hold's summary at its end (event toSeq).
func (c *Takeover) summary(reason string, until time.Time, toSeq uint64) messages.Handback {
	h := c.hold
	hb := messages.Handback{
		People: h.people, Reason: reason, Since: h.since, Until: until,
		FromSeq: h.fromSeq, ToSeq: toSeq, FromCursor: h.fromCursor, ToCursor: c.cursorNow(),
		Lines: h.lines, HalfTyped: h.editor.pending(),
	}
	if len(hb.Lines) > maxHandbackLines {
		hb.Lines, hb.Truncated = hb.Lines[len(hb.Lines)-maxHandbackLines:], true
	}
	// The exit codes the shell's prompt marker signed meanwhile, from the
	// session's recent events.
	if r, ok := c.session.BackendSession().(backend.Recorder); ok && h.fromSeq > 0 {
		evs, lost := r.Events(h.fromSeq)
		hb.Truncated = hb.Truncated || lost
		for _, ev := range evs {
			if ev.Seq >= toSeq {
				break
			}
			if ev.Kind == record.KindPrompt && ev.ExitCode != nil {
				hb.ExitCodes = append(hb.ExitCodes, *ev.ExitCode)
			}
		}
	}
	return hb
}

// merge joins two holds the agent has not yet been told of.
func merge(a, b messages.Handback) messages.Handback {
	m := b
	m.People = append(append([]string(nil), a.People...), b.People...)
	m.Since, m.FromSeq, m.FromCursor = a.Since, a.FromSeq, a.FromCursor
	m.Lines = append(append([]messages.TypedLine(nil), a.Lines...), b.Lines...)
	m.ExitCodes = append(append([]int(nil), a.ExitCodes...), b.ExitCodes...)
	m.Truncated = a.Truncated || b.Truncated
	if len(m.Lines) > maxHandbackLines {
		m.Lines, m.Truncated = m.Lines[len(m.Lines)-maxHandbackLines:], true
	}
	return m
}

// Join adds hb to the summary the agent has not been told yet (pending,
// nil when there is none).
func Join(pending, hb *messages.Handback) *messages.Handback {
	if pending == nil {
		return hb
	}
	m := merge(*pending, *hb)
	return &m
}

// Bounced: the send a hand-back was noted to had settled already; the
// agent's next result carries it.
func (c *Takeover) Bounced(hb *messages.Handback) { c.pending = Join(c.pending, hb) }

// TakeHandback hands the pending summary to the agent's result, once.
func (c *Takeover) TakeHandback() *messages.Handback {
	hb := c.pending
	c.pending = nil
	return hb
}

// noteControl puts the change in the session's stream and returns its
// number (zero without a stream).
func (c *Takeover) noteControl(reason string, interrupt bool) uint64 {
	r, ok := c.session.BackendSession().(backend.Recorder)
	if !ok {
		return 0
	}
	st := c.state
	return r.Note(record.Event{Kind: record.KindControl, Control: &record.Control{
		Holder: st.Holder, Person: st.Person, Epoch: st.Epoch, Reason: reason, Interrupt: interrupt,
	}})
}

// cursorNow is the transcript's line cursor now.
func (c *Takeover) cursorNow() uint64 {
	// A cursor read from past the end reads no line, only the cursor.
	r, err := c.session.BackendSession().ReadSince(math.MaxUint64)
	if err != nil {
		return 0
	}
	return r.Cursor
}

// typed adds a person's written input to the hold's lines.
func (h *holdLog) typed(p []byte, secret bool) {
	for _, line := range h.editor.feed(p, secret) {
		h.lines = append(h.lines, line)
		if len(h.lines) > 2*maxHandbackLines {
			h.lines = append(h.lines[:0], h.lines[len(h.lines)-maxHandbackLines:]...)
		}
	}
}
