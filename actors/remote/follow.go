package remote

import (
	"time"

	"github.com/ptyactor/ptyactor/actors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// Waits on an adopted send. A resumed owner's session may come back with
// a send in flight that another client started (a ptymcp killed during a
// terminal_send): the host holds the session's send slot for it, and its
// output and result were meant for a caller that is gone. A wait (a send
// that writes nothing) on the proxy follows that send instead of asking
// the host, which would refuse it as SEND_ACTIVE: it settles with the
// send's settlement (its whole output not yet read, the wait reason, the
// exit code), or with timeout at its own deadline, the send going on for
// the next wait. A settlement no wait has returned yet is kept
// (unclaimed) for the next wait, which returns it at once; a send this
// client starts drops it. Cancelling a following wait ends the wait only.
// The wait's other terms (silence, pattern, cursor) do not apply: the
// send's own terms, set by the client that started it, settle it.

// followBit marks the tickets of following waits: the host's tickets for
// a session count up from 1 and never reach it.
const followBit = 1 << 62

// isFollowTicket reports whether ticket names a following wait.
func isFollowTicket(ticket uint64) bool { return ticket&followBit != 0 }

// follows is a proxy's state for waits on its adopted send.
type follows struct {
	// unclaimed: the adopted send's settlement, until a wait returns it.
	unclaimed *protocol.SendSettled
	// followSeq numbers the following waits; followEnded is the highest
	// ticket of one that ended.
	followSeq, followEnded uint64
}

// follower is one wait following the adopted send.
type follower struct {
	ticket uint64
	pid    *actor.PID   // the waiter's reply box
	notify bool         // it asked for the settlement (StartSend.NotifySettled)
	timer  actors.Timer // its deadline
}

// followDeadline: a following wait's deadline passed.
type followDeadline struct {
	ticket uint64
	after  time.Duration
}

// followable reports whether a wait now follows the adopted send.
func (p *remoteSession) followable() bool {
	return p.unclaimed != nil || p.cur != nil && p.cur.adopted
}

// follow makes m, a wait, follow the adopted send: answered at once with
// an unclaimed settlement, else when the send settles or at m's deadline.
func (p *remoteSession) follow(ctx actor.Context, m *protocol.StartSend) {
	if err := m.Request.Validate(); err != nil {
		ctx.Respond(&protocol.StartSendReply{Err: err})
		return
	}
	if s := p.unclaimed; s != nil {
		p.unclaimed = nil
		ctx.Respond(&protocol.StartSendReply{Ticket: s.Ticket})
		if m.NotifySettled {
			ctx.Send(ctx.Sender(), s)
		}
		return
	}
	p.followSeq++
	f := &follower{ticket: followBit | p.followSeq, pid: ctx.Sender(), notify: m.NotifySettled}
	d := m.Request.Wait.Timeout
	if d <= 0 {
		d = messages.Ms(p.cfg.TimeoutMs)
	}
	self, sys, ticket := p.self, p.sys, f.ticket
	f.timer = p.clock.AfterFunc(d, func() { sys.Root.Send(self, &followDeadline{ticket: ticket, after: d}) })
	p.cur.followers = append(p.cur.followers, f)
	ctx.Respond(&protocol.StartSendReply{Ticket: f.ticket})
}

// followed hands the adopted send's settlement to the waits that follow
// it, or keeps it for the next wait when none does (a failure, the host
// lost or the owner detached, is not kept: the session's state says it).
func (p *remoteSession) followed(op *remoteOp, s *protocol.SendSettled) {
	fs := op.followers
	op.followers = nil
	if len(fs) == 0 {
		if s.Err == nil {
			p.unclaimed = s
		}
		return
	}
	for _, f := range fs {
		f.timer.Stop()
		p.followEnded = max(p.followEnded, f.ticket)
		if f.notify {
			p.sys.Root.Send(f.pid, &protocol.SendSettled{Session: p.id, Ticket: f.ticket, Result: s.Result, Err: s.Err})
		}
	}
}

// unfollow ends the following wait ticket before the send settles, with
// r (the session's status added) and err; false when it ended already.
func (p *remoteSession) unfollow(ticket uint64, r messages.SendResult, err error) bool {
	if p.cur == nil {
		return false
	}
	for i, f := range p.cur.followers {
		if f.ticket != ticket {
			continue
		}
		p.cur.followers = append(p.cur.followers[:i], p.cur.followers[i+1:]...)
		f.timer.Stop()
		p.followEnded = max(p.followEnded, f.ticket)
		r.Status = p.snap.Status
		if f.notify {
			p.sys.Root.Send(f.pid, &protocol.SendSettled{Session: p.id, Ticket: f.ticket, Result: r, Err: err})
		}
		return true
	}
	return false
}

// readFollowed answers a following wait's ReadSendOutput: the adopted
// send's new output while the wait follows it, settled once it ended.
func (p *remoteSession) readFollowed(ctx actor.Context, m *protocol.ReadSendOutput) {
	if p.cur != nil {
		for _, f := range p.cur.followers {
			if f.ticket == m.Ticket {
				req := &wire.ReadSendOutput{Session: p.hostID, Ticket: p.cur.ticket}
				p.forward(&remoteOp{msg: m, sender: ctx.Sender()}, &wire.Request{Body: &wire.Request_ReadSendOutput{ReadSendOutput: req}}, false)
				return
			}
		}
	}
	if m.Ticket <= p.followEnded {
		ctx.Respond(&protocol.ReadSendOutputReply{Settled: true})
		return
	}
	ctx.Respond(&protocol.ReadSendOutputReply{Err: protocol.UnknownSend(m.Ticket)})
}
