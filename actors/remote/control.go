package remote

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// A person's hold on a remote session's input is the host's: its session
// actor takes, types into and hands back the hold, and refuses the
// agent's input meanwhile. The proxy forwards TakeControl, ControlInput
// and ReturnControl (session.go) like any session request. What is left
// here is the close: the host refuses the model's close while a person
// holds the input (CONTROL_HELD), as one machine does, and the proxy then
// stays as it was; an owner's close (a dispose, a shutdown) is never
// refused on one machine, so the proxy hands the hold back on the host
// first and closes again.

// closeStep is what the close's call in flight asks the host.
type closeStep int

const (
	closeKill     closeStep = iota // close the session
	closeDescribe                  // who holds the input (to hand it back)
	closeReturn                    // hand the person's hold back
)

// maxReleases bounds the hand-backs one proxy makes for its owner's
// closes (people who keep taking the input back): a close refused beyond
// them fails, to be retried, as a close that left survivors does.
const maxReleases = 3

// controlBody is the wire request of a control request, naming the
// host's id of the session.
func (p *remoteSession) controlBody(m any) wire.RequestBody {
	switch m := m.(type) {
	case *protocol.TakeControl:
		return &wire.Request_TakeControl{TakeControl: wire.TakeControlTo(p.hostID, m.Request)}
	case *protocol.ControlInput:
		return &wire.Request_ControlInput{ControlInput: &wire.ControlInput{Session: p.hostID, Epoch: m.Epoch, Data: m.Data}}
	case *protocol.ReturnControl:
		return &wire.Request_ReturnControl{ReturnControl: &wire.ReturnControl{Session: p.hostID, Epoch: m.Epoch}}
	}
	return nil
}

// controlReply is the answer to a control request from the host's reply.
func controlReply(msg any, rep *wire.Reply, err error) any {
	switch msg.(type) {
	case *protocol.TakeControl:
		if err == nil && rep.GetTakeControl() == nil {
			err = malformed("take-control")
		}
		return &protocol.ControlReply{Control: wire.ControlFrom(rep.GetTakeControl()), Err: err}
	case *protocol.ControlInput:
		return &protocol.ControlInputReply{Err: err}
	case *protocol.ReturnControl:
		var h messages.Handback
		if w := wire.HandbackFrom(rep.GetReturnControl()); w != nil {
			h = *w
		} else if err == nil {
			err = malformed("hand-back")
		}
		return &protocol.ReturnControlReply{Handback: h, Err: err}
	}
	return nil
}

// onCloseStep handles the reply to the close's call in flight.
func (p *remoteSession) onCloseStep(ctx actor.Context, rep *wire.Reply) {
	switch p.closeStep {
	case closeDescribe:
		if c := rep.GetDescribe().GetControl(); rep.GetError() == nil && c.GetPerson() {
			p.closeStep = closeReturn
			p.closeCall = p.call(&wire.Request{Body: &wire.Request_ReturnControl{ReturnControl: &wire.ReturnControl{Session: p.hostID, Epoch: c.GetEpoch()}}}, false, false)
			return
		}
		p.askKill() // the hold ended meanwhile, or the session is gone
	case closeReturn:
		p.askKill() // handed back, or the hold moved on: close again
	default:
		p.onClosed(ctx, rep)
	}
}

// heldClose handles a close the host refused because a person holds the
// input; it reports whether it did. The model's close (Kill callers only)
// is refused as on one machine, and the session goes on; a close with the
// owner among its callers hands the hold back and closes again.
func (p *remoteSession) heldClose(ctx actor.Context, err error) bool {
	owner := false
	for _, w := range p.closeWaiters {
		owner = owner || !w.Kill
	}
	if !owner {
		waiters := p.closeWaiters
		p.closeWaiters = nil
		p.phase, p.closeReason = phaseReady, ""
		for _, w := range waiters {
			p.replyClose(w, false, messages.CloseReport{}, err)
		}
		return true
	}
	if p.releases >= maxReleases {
		return false
	}
	p.releases++
	p.log.Info().Str("session", string(p.id)).Msg("the owner closes a session a person holds: handing the hold back on the host first")
	p.closeStep = closeDescribe
	p.closeCall = p.call(&wire.Request{Body: &wire.Request_Describe{Describe: &wire.Describe{Session: p.hostID}}}, false, false)
	return true
}

func malformed(what string) error {
	return fmt.Errorf("%w: malformed %s reply", messages.ErrTransport, what)
}

// onControlChanged: the session's input changed hands on the host. The
// client's subscribers hear it as a local session's (EventControlChanged,
// under the client's id).
func (p *remoteSession) onControlChanged(m *linkControl) {
	if p.lostErr != nil || p.phase == phaseClosed {
		return
	}
	p.snap.Control = m.control
	p.sys.EventStream.Publish(&protocol.EventControlChanged{Owner: p.owner, Session: p.id, Control: m.control, Handback: m.handback})
}
