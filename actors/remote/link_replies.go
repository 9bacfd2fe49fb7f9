package remote

// The host's replies: a chunked reply put together, each reply answered
// to its call's maker, a late one cleaned up, and the pushes (a session's
// exit, its control) sent to the session's proxy.

import (
	"fmt"

	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"google.golang.org/protobuf/proto"
)

// onChunk adds a part of a large reply; the last part makes the reply. A
// bad or malformed one fails its call as a transport error.
func (l *hostLink) onChunk(m *wire.Chunk) {
	data, err := l.asm.Add(m)
	if err != nil {
		l.log.Error().Err(err).Msg("bad reply chunk from the host")
		l.answer(m.Call, &wire.Reply{Call: m.Call, Error: wire.ErrorTo(fmt.Errorf("%w: %v", messages.ErrTransport, err))})
		return
	}
	if data != nil {
		var rep wire.Reply
		if err := proto.Unmarshal(data, &rep); err != nil || rep.Call != m.Call {
			l.answer(m.Call, &wire.Reply{Call: m.Call, Error: wire.ErrorTo(fmt.Errorf("%w: malformed reply", messages.ErrTransport))})
			return
		}
		l.onReply(&rep)
	}
}

// onLate handles the reply to a call that was in flight when the host was
// lost, if it left something on the host: an owner opened for this client
// is disposed (nothing here uses it: its spawns failed with the loss); an
// owner resumed for it is detached, back to the host's grace, so that the
// resume can be tried again with the same resume token.
func (l *hostLink) onLate(call uint64, rep *wire.Reply) {
	kind, ok := l.late[call]
	if !ok {
		return
	}
	delete(l.late, call)
	switch kind {
	case forOpen:
		if t := rep.GetOpenOwner().GetToken(); t != "" {
			l.dispose(t)
		}
	case forResume:
		if t := rep.GetResumeOwner().GetToken(); t != "" {
			l.send(&wire.Request{Call: l.host.newCall(), Token: t, Body: &wire.Request_DetachOwner{DetachOwner: &wire.DetachOwner{}}})
		}
	}
}

// onReply routes a reply: call 0 is a push, any other answers its call.
func (l *hostLink) onReply(rep *wire.Reply) {
	if rep.Call == 0 {
		l.onPush(rep)
		return
	}
	l.answer(rep.Call, rep)
}

// answer hands a reply to what its call was for: the link's own calls
// (beat, open, resume, dispose) here, a caller's to the caller; a
// streamed call stays pending until its last reply.
func (l *hostLink) answer(call uint64, rep *wire.Reply) {
	p := l.calls[call]
	if p == nil {
		l.onLate(call, rep)
		return
	}
	final := !p.multi || rep.GetSendSettled() != nil || rep.Body == nil || rep.GetWatchBatch().GetLast()
	if final {
		delete(l.calls, call)
	}
	switch p.kind {
	case forBeat:
	case forOpen:
		ro := p.owner
		ro.opening = false
		if err := wire.ErrorFrom(rep.Error); err != nil || rep.GetOpenOwner() == nil {
			if err == nil {
				err = fmt.Errorf("%w: malformed open-owner reply", messages.ErrTransport)
			}
			l.failQueued(ro, err)
			if l.owners[ro.owner] == ro {
				delete(l.owners, ro.owner)
			}
			return
		}
		ro.token, ro.resume = rep.GetOpenOwner().GetToken(), rep.GetOpenOwner().GetResumeToken()
		l.opened(ro)
		// Every spawn that wanted it may have given up meanwhile.
		l.maybeDispose(ro)
	case forResume:
		ro := p.owner
		ro.opening = false
		res := rep.GetResumeOwner()
		err := wire.ErrorFrom(rep.Error)
		if err == nil && res == nil {
			err = fmt.Errorf("%w: malformed resume reply", messages.ErrTransport)
		}
		if err != nil {
			l.failQueued(ro, err)
			if l.owners[ro.owner] == ro {
				delete(l.owners, ro.owner)
			}
			l.sys.Root.Send(p.replyTo, &linkResumeReply{err: err})
			return
		}
		ro.token = res.GetToken()
		l.opened(ro)
		l.sys.Root.Send(p.replyTo, &linkResumeReply{sessions: res.GetSessions()})
	case forDispose:
		l.disposes--
		l.maybeClosed()
	default:
		l.sys.Root.Send(p.replyTo, &linkReply{call: call, rep: rep})
	}
}

// onPush sends the host's push about a session (its exit, its control)
// to the proxy watching it.
func (l *hostLink) onPush(rep *wire.Reply) {
	if ex := rep.GetSessionExited(); ex != nil {
		if w, ok := l.watchers[ex.GetSession()]; ok {
			l.sys.Root.Send(w.pid, &linkExited{status: wire.StatusFrom(ex.GetStatus())})
		}
	}
	if cc := rep.GetControlChanged(); cc != nil {
		if w, ok := l.watchers[cc.GetSession()]; ok {
			l.sys.Root.Send(w.pid, &linkControl{control: wire.ControlFrom(cc.GetControl()), handback: wire.HandbackFrom(cc.GetHandback())})
		}
	}
}
