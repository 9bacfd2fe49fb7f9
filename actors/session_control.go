package actors

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// Who holds a session's input is a fact of its session actor: the agent
// by default, or a person who took it over (TakeControl). Every change
// moves the epoch on; a person's input (ControlInput) is written only
// under the epoch it was taken with, in order, one write at a time off
// the mailbox. While a person holds it, the agent's calls that would
// write or change the terminal are refused (ErrControlHeld). When it
// comes back (ReturnControl, or the idle timeout), what the people did is
// summed up (messages.Handback) for the agent's next result.

type (
	// personWritten: a person's input was written (or failed).
	personWritten struct {
		epoch  uint64
		data   []byte
		secret bool
		err    error
		sender *actor.PID
	}
	// controlIdle: the hold of epoch may have run out of its idle time.
	controlIdle struct{ epoch uint64 }
	// handbackNote: session → the send in flight at a hand-back, whose
	// result is the agent's next one; handbackBounced: send → session,
	// it had settled already (the next result takes it).
	handbackNote    struct{ hb *messages.Handback }
	handbackBounced struct{ hb *messages.Handback }
)

// sessionControl is the session actor's control state.
type sessionControl struct {
	state     messages.Control
	lastInput time.Time
	idle      Timer
	// hold is the people's hold in progress (from the first take until
	// the agent has the input again).
	hold *holdLog
	// pending is the summary the agent's next result carries.
	pending *messages.Handback
	// The person's input: one write in flight (cancel ends it when
	// control moves on), the rest queued in order.
	writing bool
	cancel  context.CancelFunc
	queue   []*protocol.ControlInput
	senders []*actor.PID
	// The fence: a change of holder waits until no input of the old
	// holder is being written (a person's write, or the agent's send in
	// flight, which closes its gate and acknowledges: takeOverFenced),
	// so the stream shows every input before the change that ends its
	// holder's turn. Control requests that arrive meanwhile wait in
	// order in deferred.
	fencing      bool
	replaying    bool   // runDeferredControl hands a deferred request on
	fencedTicket uint64 // the send already told of this take-over
	// delegated: that send sends the take's SIGINT (it ran the command).
	delegated bool
	deferred  []deferredControl
}

// deferredControl is a control request waiting for the fence.
type deferredControl struct {
	msg    any
	sender *actor.PID
}

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

func (s *sessionActor) initControl() {
	s.control.state = messages.Control{Holder: messages.AgentHolder, Since: s.clock.Now(), Epoch: 1}
}

// heldErr is the refusal of an agent's call while a person holds the
// input; nil while the agent does.
func (s *sessionActor) heldErr() error {
	if !s.control.state.Person {
		return nil
	}
	return messages.ControlHeld(s.id, s.control.state)
}

func (s *sessionActor) onTakeControl(m *protocol.TakeControl, sender *actor.PID) {
	reply := func(r *protocol.ControlReply) { s.sys.Root.Send(sender, r) }
	req := m.Request
	if err := req.Validate(); err != nil {
		reply(&protocol.ControlReply{Err: err})
		return
	}
	switch {
	case s.phase == phaseClosing || s.phase == phaseClosed:
		reply(&protocol.ControlReply{Err: messages.ErrSessionClosing})
		return
	case s.status.Exited:
		reply(&protocol.ControlReply{Err: messages.ErrSessionExited})
		return
	}
	if _, ok := s.bs.(backend.PersonWriter); !ok {
		reply(&protocol.ControlReply{Err: messages.InvalidArgument("this session's backend cannot take a person's input")})
		return
	}
	c := &s.control
	if s.deferControl(m, sender) {
		return
	}
	// The agent's send in flight settles now (taken_over) and writes
	// nothing more; the take completes once it says so. A wait goes on.
	// The SIGINT, when asked for, goes with the send that ran the
	// command, or straight to the foreground program.
	// A send settled while its write drains still writes: it is fenced
	// too.
	writingSend := s.sendPID != nil && !s.sendStartup && !s.sendIsWait
	if writingSend && c.fencedTicket != s.sendTicket {
		c.fencedTicket, c.fencing = s.sendTicket, true
		c.delegated = req.Interrupt && !s.sendSettled
		s.sys.Root.Send(s.sendPID, &takeOver{interrupt: req.Interrupt})
		// First in line: what came after it waits for it.
		c.deferred = append([]deferredControl{{msg: m, sender: sender}}, c.deferred...)
		return
	}
	if req.Interrupt && !c.delegated {
		s.interruptForeground()
	}
	c.delegated = false
	now := s.clock.Now()
	c.state.Epoch++
	c.state = messages.Control{Holder: req.Person, Person: true, Since: now, Epoch: c.state.Epoch,
		IdleTimeout: req.IdleTimeout, IdleDeadline: now.Add(req.IdleTimeout)}
	c.lastInput = now
	s.dropPersonInput()
	seq := s.noteControl("taken", req.Interrupt)
	if c.hold == nil {
		c.hold = &holdLog{since: now, fromSeq: seq, fromCursor: s.cursorNow()}
	}
	if n := len(c.hold.people); n == 0 || c.hold.people[n-1] != req.Person {
		c.hold.people = append(c.hold.people, req.Person)
	}
	s.armIdle(req.IdleTimeout)
	s.sys.EventStream.Publish(&protocol.EventControlChanged{Owner: s.owner, Session: s.id, Control: c.state})
	reply(&protocol.ControlReply{Control: c.state})
}

// deferControl defers a control request while the fence is up (a write
// of the old holder in flight, or the agent's send not yet stopped), or
// while earlier ones wait; it reports whether it did. A person's write
// that may block (a program not reading) is abandoned: what it wrote
// stays, the rest is not written.
func (s *sessionActor) deferControl(m any, sender *actor.PID) bool {
	c := &s.control
	if c.replaying || !c.writing && !c.fencing && len(c.deferred) == 0 {
		return false
	}
	if _, input := m.(*protocol.ControlInput); !input && c.cancel != nil {
		c.cancel()
	}
	c.deferred = append(c.deferred, deferredControl{msg: m, sender: sender})
	return true
}

// runDeferredControl handles the deferred control requests, in order,
// while the fence is down.
func (s *sessionActor) runDeferredControl() {
	c := &s.control
	if c.replaying {
		return // the loop below goes on
	}
	c.replaying = true
	defer func() { c.replaying = false }()
	for len(c.deferred) > 0 && !c.writing && !c.fencing {
		d := c.deferred[0]
		c.deferred = c.deferred[1:]
		switch m := d.msg.(type) {
		case *protocol.TakeControl:
			s.onTakeControl(m, d.sender)
		case *protocol.ControlInput:
			s.onControlInput(m, d.sender)
		case *protocol.ReturnControl:
			s.onReturnControl(m, d.sender)
		case *controlIdle:
			s.onControlIdle(m)
		}
	}
}

// onTakeOverFenced: the send in flight at a take-over writes no more.
func (s *sessionActor) onTakeOverFenced(ticket uint64) {
	c := &s.control
	if c.fencing && ticket == c.fencedTicket {
		c.fencing = false
		s.runDeferredControl()
	}
}

// interruptForeground sends SIGINT to a program running in the
// foreground (never to the shell at its prompt), off the mailbox.
func (s *sessionActor) interruptForeground() {
	if pgid, err := s.bs.Foreground(); err != nil || pgid == s.bs.PID() {
		return
	}
	bs, src := s.bs, s.personSource()
	go func() {
		res, err := bs.Signal(messages.SIGINT)
		if r, ok := bs.(backend.Recorder); ok && err == nil && res.Delivered {
			r.Note(record.Event{Kind: record.KindSignal, Signal: &record.Signal{Name: string(messages.SIGINT), Target: res.TargetPgid, Source: src}})
		}
	}()
}

func (s *sessionActor) onControlInput(m *protocol.ControlInput, sender *actor.PID) {
	reply := func(r *protocol.ControlInputReply) { s.sys.Root.Send(sender, r) }
	c := &s.control
	if (c.fencing || len(c.deferred) > 0) && s.deferControl(m, sender) {
		return // behind a change of holder
	}
	switch {
	case !c.state.Person || m.Epoch != c.state.Epoch:
		reply(&protocol.ControlInputReply{Err: messages.ControlStale(s.id, m.Epoch, c.state)})
		return
	case s.phase == phaseClosing || s.phase == phaseClosed:
		reply(&protocol.ControlInputReply{Err: messages.ErrSessionClosing})
		return
	case s.status.Exited:
		reply(&protocol.ControlInputReply{Err: messages.ErrSessionExited})
		return
	case len(m.Data) == 0:
		reply(&protocol.ControlInputReply{})
		return
	}
	now := s.clock.Now()
	c.lastInput = now
	c.state.IdleDeadline = now.Add(c.state.IdleTimeout)
	c.queue = append(c.queue, m)
	c.senders = append(c.senders, sender)
	s.writePersonInput()
}

// writePersonInput writes the oldest queued input of the current hold,
// one write at a time, off the mailbox.
func (s *sessionActor) writePersonInput() {
	c := &s.control
	if c.writing || len(c.queue) == 0 {
		return
	}
	if len(c.deferred) > 0 {
		// A change of holder waits: the queued input is now stale.
		s.dropPersonInput()
		return
	}
	m, sender := c.queue[0], c.senders[0]
	c.queue, c.senders = c.queue[1:], c.senders[1:]
	c.writing = true
	wctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	pw := s.bs.(backend.PersonWriter)
	src, self, sys := s.personSource(), s.self, s.sys
	go func() {
		secret, err := pw.WriteAs(wctx, src, m.Data)
		sys.Root.Send(self, &personWritten{epoch: m.Epoch, data: m.Data, secret: secret, err: err, sender: sender})
	}()
}

func (s *sessionActor) onPersonWritten(m *personWritten) {
	c := &s.control
	c.writing = false
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	if c.hold != nil && c.state.Person && m.epoch == c.state.Epoch {
		c.hold.typed(m.data, m.secret)
	}
	err := m.err
	switch {
	case errors.Is(err, context.Canceled):
		// Abandoned for a change of holder: the rest is not written.
		err = messages.ControlStale(s.id, m.epoch, c.state)
	case err != nil:
		err = fmt.Errorf("%w: a person's input: %w", messages.ErrTransport, err)
	}
	s.sys.Root.Send(m.sender, &protocol.ControlInputReply{Err: err})
	s.writePersonInput()
	s.runDeferredControl()
}

// dropPersonInput refuses the queued input of a hold that ended and
// abandons the one being written (what was written stays).
func (s *sessionActor) dropPersonInput() {
	c := &s.control
	for i, m := range c.queue {
		s.sys.Root.Send(c.senders[i], &protocol.ControlInputReply{Err: messages.ControlStale(s.id, m.Epoch, c.state)})
	}
	c.queue, c.senders = nil, nil
	if c.cancel != nil {
		c.cancel()
	}
}

// refuseDeferredControl answers the control requests still waiting for
// the fence when the session stops: nobody waits for a reply that cannot
// come.
func (s *sessionActor) refuseDeferredControl(err error) {
	for _, d := range s.control.deferred {
		if r := protocol.Refuse(d.msg, err); r != nil && d.sender != nil {
			s.sys.Root.Send(d.sender, r)
		}
	}
	s.control.deferred = nil
}

func (s *sessionActor) onReturnControl(m *protocol.ReturnControl, sender *actor.PID) {
	c := &s.control
	if !c.state.Person || m.Epoch != c.state.Epoch {
		s.sys.Root.Send(sender, &protocol.ReturnControlReply{Err: messages.ControlStale(s.id, m.Epoch, c.state)})
		return
	}
	if s.deferControl(m, sender) {
		return
	}
	s.sys.Root.Send(sender, &protocol.ReturnControlReply{Handback: s.handBack(messages.HandbackReturned)})
}

func (s *sessionActor) onControlIdle(m *controlIdle) {
	c := &s.control
	if !c.state.Person || m.epoch != c.state.Epoch {
		return
	}
	if left := c.lastInput.Add(c.state.IdleTimeout).Sub(s.clock.Now()); left > 0 {
		s.armIdle(left)
		return
	}
	if s.deferControl(m, nil) {
		return
	}
	s.handBack(messages.HandbackIdle)
}

// armIdle (re)arms the idle check of the current hold after d.
func (s *sessionActor) armIdle(d time.Duration) {
	c := &s.control
	if c.idle != nil {
		c.idle.Stop()
	}
	epoch, self, sys := c.state.Epoch, s.self, s.sys
	c.idle = s.clock.AfterFunc(d, func() { sys.Root.Send(self, &controlIdle{epoch: epoch}) })
}

// handBack gives the input back to the agent and sums the hold up for
// the agent's next result.
func (s *sessionActor) handBack(reason string) messages.Handback {
	c := &s.control
	now := s.clock.Now()
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	c.state = messages.Control{Holder: messages.AgentHolder, Since: now, Epoch: c.state.Epoch + 1}
	s.dropPersonInput()
	seq := s.noteControl(reason, false)
	hb := s.summary(reason, now, seq)
	c.hold = nil
	if s.sendPID != nil && !s.sendStartup && !s.sendSettled {
		// A send (a wait: no other runs while people hold the input) is
		// in flight: its result is the agent's next.
		note := hb
		s.sys.Root.Send(s.sendPID, &handbackNote{hb: &note})
	} else {
		c.pending = joinPending(c.pending, &hb)
	}
	s.sys.EventStream.Publish(&protocol.EventControlChanged{Owner: s.owner, Session: s.id, Control: c.state, Handback: &hb})
	return hb
}

// summary is the hold's summary at its end (event toSeq).
func (s *sessionActor) summary(reason string, until time.Time, toSeq uint64) messages.Handback {
	h := s.control.hold
	hb := messages.Handback{
		People: h.people, Reason: reason, Since: h.since, Until: until,
		FromSeq: h.fromSeq, ToSeq: toSeq, FromCursor: h.fromCursor, ToCursor: s.cursorNow(),
		Lines: h.lines, HalfTyped: h.editor.pending(),
	}
	if len(hb.Lines) > maxHandbackLines {
		hb.Lines, hb.Truncated = hb.Lines[len(hb.Lines)-maxHandbackLines:], true
	}
	// The exit codes the shell's prompt marker signed meanwhile, from the
	// session's recent events.
	if r, ok := s.bs.(backend.Recorder); ok && h.fromSeq > 0 {
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

// mergeHandbacks joins two holds the agent has not yet been told of.
func mergeHandbacks(a, b messages.Handback) messages.Handback {
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

// joinPending adds hb to the summary the agent has not been told yet.
func joinPending(pending, hb *messages.Handback) *messages.Handback {
	if pending == nil {
		return hb
	}
	m := mergeHandbacks(*pending, *hb)
	return &m
}

// takeHandback hands the pending summary to the agent's result, once.
func (s *sessionActor) takeHandback() *messages.Handback {
	hb := s.control.pending
	s.control.pending = nil
	return hb
}

// noteControl puts the change in the session's stream and returns its
// number (zero without a stream).
func (s *sessionActor) noteControl(reason string, interrupt bool) uint64 {
	r, ok := s.bs.(backend.Recorder)
	if !ok {
		return 0
	}
	st := s.control.state
	return r.Note(record.Event{Kind: record.KindControl, Control: &record.Control{
		Holder: st.Holder, Person: st.Person, Epoch: st.Epoch, Reason: reason, Interrupt: interrupt,
	}})
}

// cursorNow is the transcript's line cursor now.
func (s *sessionActor) cursorNow() uint64 {
	// A cursor read from past the end reads no line, only the cursor.
	r, err := s.bs.ReadSince(math.MaxUint64)
	if err != nil {
		return 0
	}
	return r.Cursor
}

// personSource is the record's source for the holder's input.
func (s *sessionActor) personSource() string {
	if h := s.control.state.Holder; h != messages.OperatorHolder {
		return record.SourceHuman + h
	}
	return record.SourceOperator
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

// lineEditor follows what a person types closely enough to tell the
// agent the lines they submitted: printable text, Backspace, C-u, C-w,
// C-c (the line is abandoned), Enter; escape sequences (arrows, function
// keys) and other control keys are left out. Typed at a secret prompt,
// only the count is kept. Keys arrive in chunks of any size (the live
// view sends each key as its own message; Control.Type may cut anywhere),
// so a character or an escape sequence cut between two chunks is kept
// until it is whole. What it cannot follow exactly it only has to name:
// the hand-back's line is discarded before the agent's next send
// whatever it was (backend/local's clear).
type lineEditor struct {
	line      []rune
	secretLen int
	secret    bool
	esc       int    // 0: none; 1: after ESC; 2: in a CSI or SS3 sequence
	seq       []byte // the escape sequence so far (pending, if unfinished)
	paste     bool   // inside a bracketed paste (ESC [200~ until ESC [201~): Enter is text
	partial   []byte // the start of a UTF-8 character cut by the chunk's end
}

// maxLineRunes bounds a line the editor keeps.
const maxLineRunes = 4096

func (e *lineEditor) feed(p []byte, secret bool) []messages.TypedLine {
	var out []messages.TypedLine
	if secret {
		e.secret = true
	}
	if len(e.partial) > 0 {
		p = append(e.partial, p...)
		e.partial = nil
	}
	for len(p) > 0 {
		if !utf8.FullRune(p) {
			e.partial = append([]byte(nil), p...)
			break
		}
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		if r == 0x03 {
			// C-c: the terminal's interrupt, whatever the line editor
			// was in the middle of.
			e.reset()
			continue
		}
		if e.esc > 0 {
			e.escape(r)
			continue
		}
		if r == 0x1b {
			e.esc, e.seq = 1, append(e.seq[:0], 0x1b)
			continue
		}
		if e.paste {
			// Pasted text is inserted as it is, line ends included.
			if r >= 0x20 || r == '\t' || r == '\n' || r == '\r' {
				e.insert(r, secret)
			}
			continue
		}
		switch r {
		case '\r', '\n':
			if e.secret {
				out = append(out, messages.TypedLine{Secret: true, Len: e.secretLen + len(string(e.line))})
			} else {
				out = append(out, messages.TypedLine{Text: string(e.line), Len: len(string(e.line))})
			}
			e.reset()
		case 0x7f, 0x08:
			if secret && e.secretLen > 0 {
				e.secretLen--
			} else if len(e.line) > 0 {
				e.line = e.line[:len(e.line)-1]
			}
		case 0x15:
			e.line, e.secretLen = e.line[:0], 0
		case 0x17:
			i := len(e.line)
			for i > 0 && e.line[i-1] == ' ' {
				i--
			}
			for i > 0 && e.line[i-1] != ' ' {
				i--
			}
			e.line = e.line[:i]
		default:
			if r >= 0x20 {
				e.insert(r, secret)
			}
		}
	}
	return out
}

// escape takes one rune of an escape sequence: ESC and one key (a meta
// key), or a CSI or SS3 sequence up to its final byte. The bracketed
// paste's marks are the only ones it acts on.
func (e *lineEditor) escape(r rune) {
	if len(e.seq) < 32 {
		e.seq = utf8.AppendRune(e.seq, r)
	}
	switch {
	case e.esc == 1 && (r == '[' || r == 'O'):
		e.esc = 2
		return
	case e.esc == 2 && (r < 0x40 || r > 0x7e):
		return
	}
	switch string(e.seq) {
	case "\x1b[200~":
		e.paste = true
	case "\x1b[201~":
		e.paste = false
	}
	e.esc, e.seq = 0, e.seq[:0]
}

func (e *lineEditor) insert(r rune, secret bool) {
	if secret {
		e.secretLen++
	} else if len(e.line) < maxLineRunes {
		e.line = append(e.line, r)
	}
}

func (e *lineEditor) reset() {
	e.line, e.secretLen, e.secret = e.line[:0], 0, false
	e.esc, e.seq, e.paste = 0, e.seq[:0], false
}

// pending is the unsubmitted line ("" for one typed at a secret prompt),
// with what makes it more than its text, Go-quoted: an unfinished escape
// sequence or character at its end ("git pu\\x1b["), the mark of a paste
// still open at its start ("\\x1b[200~echo pasted").
func (e *lineEditor) pending() string {
	if e.secret {
		return ""
	}
	s := string(e.line)
	if e.paste {
		s = `\x1b[200~` + s
	}
	if tail := string(e.seq) + string(e.partial); tail != "" {
		q := strconv.Quote(tail)
		s += q[1 : len(q)-1]
	}
	return s
}
