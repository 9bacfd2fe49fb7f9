package actors

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// settle fixes the send's outcome once, settled by the tiers. After it,
// output reaches only scrollback.
func (a *sendActor) settle(reason messages.WaitReason, code *int, err error) {
	a.settleBy(reason, code, err, byTiers)
}

// settleBy fixes the outcome, by says what besides the reason settled it.
// The lifecycle moves to phaseHolding; deliver moves it on to
// phaseSettled once the receipt and the record allow.
func (a *sendActor) settleBy(reason messages.WaitReason, code *int, err error, by settledBy) {
	if a.settled() {
		return
	}
	closing := a.phase == phaseFrozen
	a.moveTo(phaseHolding)
	a.stopTimers()
	a.sys.Root.Send(a.facts, &unsubscribeFacts{pid: a.self})
	a.out.result = a.buildResult(reason, code, err, closing, by, a.finalOutput())
	await := a.listLeftovers()
	a.out.unwritten, a.in.lines = a.in.lines, nil // never written later
	a.out.err = err
	if err != nil {
		a.log.Debug().Err(err).Uint64("ticket", a.ticket).Msg("send failed")
	}
	a.out.draining = a.in.stage == stageInFlight || a.intr.sigint == sigintInFlight
	if a.began == clearingForeign {
		// The send never began: its input is never written.
		a.in.gate.CompareAndSwap(gateOpen, gateClosed)
	}
	durable := a.recordSettle()
	if await == nil && durable == nil {
		a.deliver()
		return
	}
	a.holdFor(await, durable)
}

// holdFor makes the result wait, off the mailbox, for the receipt and for
// its settle to be on record (settleReady, or settleOverdue past the
// bound).
func (a *sendActor) holdFor(await backend.LeftoverLister, durable func(context.Context) error) {
	self, sys, log, ticket := a.self, a.sys, a.log, a.ticket
	go func() {
		var m settleReady
		if await != nil {
			m.procs, m.listed = await.AwaitLeftovers(), true
		}
		if durable != nil {
			ctx, cancel := context.WithTimeout(context.Background(), recordFlushTimeout)
			if err := durable(ctx); err != nil {
				log.Warn().Err(err).Uint64("ticket", ticket).Msg("the send's settle is not on record")
			}
			cancel()
		}
		sys.Root.Send(self, &m)
	}()
	if durable != nil {
		// The flush writes the record itself, and a write to a disk
		// that does not answer cannot be cut: past the bound the
		// result goes out without waiting for it.
		a.out.overdue = a.clock.AfterFunc(recordOverdue, func() { sys.Root.Send(self, &settleOverdue{}) })
	}
}

// recordFlushTimeout bounds how long a send's result waits for its settle
// to reach the record's file; past it the result goes out and the record
// reports the failure at close. recordOverdue is the actor's own bound,
// for a flush stuck in a write.
const (
	recordFlushTimeout = 5 * time.Second
	recordOverdue      = recordFlushTimeout + time.Second
)

// finalOutput ends the send's collection and returns its output: what the
// backend still held, for a wait with a cursor the output since that
// cursor, and before it what a pattern kept, within MaxReadBytes.
func (a *sendActor) finalOutput() messages.SendRead {
	if a.began != begun {
		return messages.SendRead{} // it never began (awaitClear)
	}
	out := a.bs.EndSend()
	if a.isWait() && a.since != nil {
		// A wait shows the output since the caller's cursor, what was
		// printed before it began included.
		if r, err := a.bs.ReadSince(*a.since); err == nil {
			out.Delta, out.Cursor, out.OmittedFrom, out.OmittedTo = r.Text, r.Cursor, r.OmittedFrom, r.OmittedTo
			out.Truncated = out.Truncated || r.Truncated || r.More
		}
	}
	if len(a.kept) > 0 {
		out.Delta = string(a.kept) + out.Delta
		if over := textcut.Tail(out.Delta, a.cfg.MaxReadBytes); over > 0 {
			out.Delta, out.Truncated = out.Delta[over:], true
		}
		a.kept = nil
	}
	return out
}

// buildResult is the send's result from what settled it, the evidence
// and the output; a full-screen program's result carries its screen.
func (a *sendActor) buildResult(reason messages.WaitReason, code *int, err error, closing bool, by settledBy, out messages.SendRead) messages.SendResult {
	res := messages.SendResult{
		Handback:   a.handback,
		Viewport:   out.Delta,
		WaitReason: reason,
		Cause:      a.cause(reason, code, err, closing, by),
		Status:     a.ev.status,
		Truncated:  a.ev.truncated || out.Truncated,
		ExitCode:   code,
		Reader:     a.ev.reader,
		Elapsed:    a.clock.Now().Sub(a.started),
		Unwritten:  len(a.in.lines),
		Cursor:     out.Cursor, OmittedFrom: out.OmittedFrom, OmittedTo: out.OmittedTo,
		// Only a program's (or the shell's read builtin's) proven wait is a
		// secret prompt; a prompt marker means the shell's line editor.
		Secret:        a.ev.secret && code == nil && reason == messages.WaitStdinRead && err == nil,
		ForeignInput:  a.foreign,
		SecretEntered: a.secretEntered,
	}
	if res.Secret && a.ev.secretPrompt != nil {
		p := *a.ev.secretPrompt
		if t, ok := a.bs.(backend.Terminal); ok {
			sc := t.Screen()
			if sc.CursorRow >= 0 && sc.CursorRow < len(sc.Rows) {
				p.Line = strings.TrimRight(sc.Rows[sc.CursorRow], " ")
			}
		}
		res.SecretPrompt = &p
	}
	if t, ok := a.bs.(backend.Terminal); ok {
		// A full-screen program: its screen is the result a person sees.
		if _, _, alt := t.InputModes(); alt || a.req.Screen {
			sc := t.Screen()
			res.Screen = &sc
		}
	}
	if len(a.in.lines) > 0 {
		res.FirstUnwritten = strings.TrimRight(string(a.in.lines[0]), "\r\n")
	}
	return res
}

// listLeftovers puts the receipt into the result: for a command that
// returned to the prompt, what it left running. A job forked an instant
// ago has no name of its own yet; then it returns the lister, and the
// settlement waits (off the mailbox) for it.
func (a *sendActor) listLeftovers() backend.LeftoverLister {
	l, ok := a.bs.(backend.LeftoverLister)
	if !ok || a.out.result.Cause != messages.CausePrompt {
		return nil
	}
	var starting bool
	a.out.result.Running, starting = l.Leftovers()
	if starting {
		return l
	}
	return nil
}

// deliver reports the fixed result to the session and the waiters.
func (a *sendActor) deliver() {
	a.moveTo(phaseSettled)
	if a.out.overdue != nil {
		a.out.overdue.Stop()
		a.out.overdue = nil
	}
	a.sys.Root.Send(a.parent, &sendFinished{
		ticket: a.ticket, result: a.out.result, err: a.out.err, draining: a.out.draining,
	})
	msg := a.settledMsg()
	for _, p := range a.subscribers {
		a.sys.Root.Send(p, msg)
	}
	a.subscribers = nil
}

// settleOverdue ends a settlement's wait for the record that took too
// long (settleReady never came).
type settleOverdue struct{}

// settleReady ends the settlement's wait: the receipt it listed (when it
// waited for one), and its settle on record.
type settleReady struct {
	procs  []messages.Process
	listed bool
}

// cause names the condition that settled the send. A cancel wins over
// whatever settled the interrupted command: the caller asked for it.
func (a *sendActor) cause(reason messages.WaitReason, code *int, err error, closing bool, by settledBy) messages.Cause {
	switch {
	case errors.Is(err, messages.ErrAbortedBeforeWrite):
		return messages.CauseCancelled
	case err != nil:
		return messages.CauseFailed
	case reason == messages.WaitSessionExit && closing:
		return messages.CauseClosed
	case reason == messages.WaitSessionExit:
		return messages.CauseExit
	case a.take.stage != takeNone:
		return messages.CauseTakenOver
	case a.intr.asked == cancelAsked:
		return messages.CauseCancelled
	case reason == messages.WaitStdinRead && code != nil:
		return messages.CausePrompt
	case reason == messages.WaitStdinRead:
		return messages.CauseInput
	case by == byPattern:
		return messages.CausePattern
	case reason == messages.WaitInferredIdle:
		return messages.CauseSilence
	}
	return messages.CauseDeadline
}

func (a *sendActor) settledMsg() *protocol.SendSettled {
	return &protocol.SendSettled{Session: a.session, Ticket: a.ticket, Result: a.out.result, Err: a.out.err}
}

// maybeDrained tells the session once a send that settled while draining
// has nothing in flight; the session keeps the slot until then, so the next
// send sees no late bytes or signals. The session retires this actor with a
// poison pill (never Stop, which would drop requests already queued here),
// so not while its result is held for the record or the receipt: the
// result has not gone out yet, and its waiters would never hear it.
func (a *sendActor) maybeDrained(ctx actor.Context) {
	if a.phase == phaseSettled && a.out.draining && a.in.stage != stageInFlight && a.intr.sigint != sigintInFlight {
		a.moveTo(phaseDrained)
		ctx.Send(a.parent, &sendDrained{ticket: a.ticket})
	}
}
