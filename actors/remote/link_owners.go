package remote

// The host-side owners: each opened on the first call that needs one,
// resumed or detached by token, held by its proxies' references and disposed
// when the last one lets go.

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// retain takes a reference for proxy pid on o's host-side owner (an
// adopted session's, after a resume).
func (l *hostLink) retain(o messages.Owner, pid *actor.PID) {
	if ro := l.owners[o]; ro != nil {
		ro.proxies[pid.Id] = struct{}{}
	}
}

// unpin lets o's host-side owner go once nothing else holds it: its
// resume token is no longer wanted.
func (l *hostLink) unpin(o messages.Owner) {
	if ro := l.owners[o]; ro != nil && ro.pinned {
		ro.pinned = false
		l.maybeDispose(ro)
	}
}

// onCall sends a proxy's call with its owner's token; a spawn opens the
// host-side owner first when there is none, and calls wait while it
// opens.
func (l *hostLink) onCall(c *linkCall) {
	if l.lost {
		if c.replyTo != nil {
			l.sys.Root.Send(c.replyTo, &linkReply{call: c.req.Call, err: l.lostErr})
		}
		return
	}
	ro := l.owners[c.owner]
	if ro == nil {
		if !c.spawn {
			// No host-side owner: it never had a session here, or its
			// last one ended. The host would say the same.
			l.refuse(c)
			return
		}
		ro = l.open(c.owner)
	}
	if c.spawn {
		ro.proxies[c.replyTo.Id] = struct{}{}
	}
	if ro.opening {
		ro.queued = append(ro.queued, c)
		return
	}
	l.forward(ro, c)
}

// open opens a host-side owner for o; calls for it queue until the host
// answered.
func (l *hostLink) open(o messages.Owner) *remoteOwner {
	ro := &remoteOwner{owner: o, opening: true, proxies: map[string]struct{}{}}
	l.owners[o] = ro
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forOpen, owner: ro}
	l.send(&wire.Request{Call: call, Body: &wire.Request_OpenOwner{OpenOwner: &wire.OpenOwner{Label: o.Label()}}})
	return ro
}

// onResumeToken answers with the owner's resume token, opening its
// host-side owner first if it has none here, and pins it: the token stays
// valid while the owner lives, with or without sessions here.
func (l *hostLink) onResumeToken(m *linkResumeToken, to *actor.PID) {
	if l.lost {
		l.sys.Root.Send(to, &linkTokenReply{err: l.lostErr})
		return
	}
	ro := l.owners[m.owner]
	if ro == nil {
		ro = l.open(m.owner)
	}
	ro.pinned = true
	if ro.opening {
		ro.tokenTo = append(ro.tokenTo, to)
		return
	}
	l.sys.Root.Send(to, &linkTokenReply{token: ro.resume})
}

// onDetach leaves the owner's sessions to the host's grace: the host is
// told (DetachOwner), this link forgets the host-side owner without
// disposing it, and its proxies hear linkDetached before the caller is
// answered, so the owner's disposal that follows closes them here only.
func (l *hostLink) onDetach(m *linkDetach, to *actor.PID) {
	ro := l.owners[m.owner]
	call := l.host.newCall()
	if ro == nil || ro.opening || l.lost {
		l.sys.Root.Send(to, &linkReply{call: call, rep: &wire.Reply{Call: call}})
		return
	}
	delete(l.owners, m.owner)
	for id, w := range l.watchers {
		if w.owner == m.owner {
			l.sys.Root.Send(w.pid, &linkDetached{})
			delete(l.watchers, id)
		}
	}
	l.calls[call] = &linkPending{replyTo: to, owner: ro}
	l.send(&wire.Request{Call: call, Token: ro.token, Body: &wire.Request_DetachOwner{DetachOwner: &wire.DetachOwner{}}})
}

// onResume reattaches a host-side owner by its resume token: the host
// answers with a new capability token and the sessions, which the
// caller adopts (each proxy takes a reference with linkRetain). The
// owner is pinned, as after linkResumeToken: its token stays the same.
func (l *hostLink) onResume(m *linkResume, to *actor.PID) {
	switch {
	case l.lost:
		l.sys.Root.Send(to, &linkResumeReply{err: l.lostErr})
		return
	case l.owners[m.owner] != nil:
		l.sys.Root.Send(to, &linkResumeReply{err: messages.InvalidArgument("the owner already has sessions on PTY host %q", l.host.name)})
		return
	}
	ro := &remoteOwner{owner: m.owner, opening: true, resume: m.token, pinned: true, proxies: map[string]struct{}{}}
	l.owners[m.owner] = ro
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forResume, replyTo: to, owner: ro}
	l.send(&wire.Request{Call: call, Body: &wire.Request_ResumeOwner{ResumeOwner: &wire.ResumeOwner{ResumeToken: m.token}}})
}

// forward sends c with ro's capability token, keeping who to answer.
func (l *hostLink) forward(ro *remoteOwner, c *linkCall) {
	if c.replyTo != nil {
		l.calls[c.req.Call] = &linkPending{replyTo: c.replyTo, multi: c.multi, owner: ro}
	}
	c.req.Token = ro.token
	l.send(c.req)
}

// refuse answers a call for an owner that has no host-side owner, as the
// host answers an unknown token.
func (l *hostLink) refuse(c *linkCall) {
	if c.replyTo == nil {
		return
	}
	rep := &wire.Reply{Call: c.req.Call}
	switch b := c.req.Body.(type) {
	case *wire.Request_List:
		rep.Body = &wire.Reply_List{List: &wire.ListReply{}}
	case *wire.Request_DisposeOwner:
		rep.Body = &wire.Reply_DisposeOwner{DisposeOwner: &wire.DisposeOwnerReply{}}
	case *wire.Request_CancelSend:
		rep.Body = &wire.Reply_CancelSend{CancelSend: &wire.CancelSendReply{}}
	default:
		_ = b
		rep.Error = wire.ErrorTo(messages.NoSession(messages.SessionID(c.req.Session())))
	}
	l.sys.Root.Send(c.replyTo, &linkReply{call: c.req.Call, rep: rep})
}

// release gives back the reference pid took on o's host-side owner, if
// it holds one on the current one.
func (l *hostLink) release(o messages.Owner, pid *actor.PID) {
	ro := l.owners[o]
	if ro == nil {
		return
	}
	if _, ok := ro.proxies[pid.Id]; !ok {
		return
	}
	delete(ro.proxies, pid.Id)
	l.maybeDispose(ro)
}

// maybeDispose disposes an opened host-side owner nothing holds any more.
func (l *hostLink) maybeDispose(ro *remoteOwner) {
	if ro.opening || ro.used() || l.owners[ro.owner] != ro {
		return
	}
	delete(l.owners, ro.owner)
	l.dispose(ro.token)
}

// dispose ends the host-side owner whose capability token is token (one
// whose last session ended, or one written off); while the host is lost,
// it waits for the host to answer again.
func (l *hostLink) dispose(token string) {
	if l.lost {
		l.writtenOff = append(l.writtenOff, token)
		return
	}
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forDispose, token: token}
	l.disposes++
	l.send(&wire.Request{Call: call, Token: token, Body: &wire.Request_DisposeOwner{DisposeOwner: &wire.DisposeOwner{}}})
}

// opened sends what waited for a host-side owner to open.
func (l *hostLink) opened(ro *remoteOwner) {
	q := ro.queued
	ro.queued = nil
	for _, c := range q {
		l.forward(ro, c)
	}
	for _, to := range ro.tokenTo {
		l.sys.Root.Send(to, &linkTokenReply{token: ro.resume})
	}
	ro.tokenTo = nil
}
