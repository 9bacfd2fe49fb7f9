package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/actors"

	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// Sessions that outlive their client. A host keeps a lost client's owners
// for its grace (ptyhost -client-grace); a client that presents an owner's
// resume token within it gets the owner's sessions back, as they are on
// the host: status, scrollback (read on by cursor: nothing lost or
// repeated), and the latest send, in flight or settled. A wait on such a
// session follows that send, and the first wait after it settled returns
// its result (follow.go): its caller is gone with the old client.

// ResumeToken returns owner's resume token on the named host: a secret
// (256 random bits, minted by the host) that lets ResumeOwner, in this or
// another process, reattach the owner's sessions there after this client
// is lost or detached. Keep it as a credential (never log it). Asking for
// it opens the owner on the host if it has no session there yet, and keeps
// it open, so the token stays the same until the owner is disposed.
func (c *Client) ResumeToken(ctx context.Context, owner messages.Owner, host string) (string, error) {
	e, err := c.hosts.named(host)
	if err != nil {
		return "", err
	}
	r, err := ask[*linkTokenReply](ctx, c.sys, e.link, &linkResumeToken{owner: owner})
	if err != nil {
		return "", err
	}
	return r.token, r.err
}

// DetachOwner ends owner here without closing its remote sessions: each
// host keeps them running for its grace, for a ResumeOwner with the
// owner's resume token (ResumeToken), and disposes them after it. What was
// pending on them here fails with ErrSessionClosing; the owner's local
// sessions, if any, are closed as by DisposeOwner, which then returns.
func (c *Client) DetachOwner(ctx context.Context, owner messages.Owner) error {
	var errs []error
	for _, e := range c.hosts.entries() {
		r, err := ask[*linkReply](ctx, c.sys, e.link, &linkDetach{owner: owner})
		if err == nil {
			if err = r.err; err == nil && r.rep != nil {
				err = wire.ErrorFrom(r.rep.Error)
			}
		}
		if err != nil && !errors.Is(err, messages.ErrHostLost) {
			errs = append(errs, fmt.Errorf("ptyactor: detach from PTY host %q: %w", e.name, err))
		}
	}
	if err := c.svc.DisposeOwner(ctx, owner); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ResumedSession is a session ResumeOwner reattached.
type ResumedSession struct {
	*actors.Session
	// Latest is the session's latest send when the owner was resumed: its
	// Result waits for the settlement if it is still in flight, or returns
	// it at once. Nil when the session had no send.
	Latest *actors.SendOp
}

// ResumeOwner reattaches, as a new owner of this service, the owner whose
// resume token (ResumeToken) is token on the named host, with its
// sessions under the ids they had; see ResumeInto.
func (c *Client) ResumeOwner(ctx context.Context, host, token string) (messages.Owner, []ResumedSession, error) {
	owner, err := c.svc.NewOwner(ctx, "resumed")
	if err != nil {
		return messages.Owner{}, nil, err
	}
	sessions, err := c.ResumeInto(ctx, owner, host, token)
	if err != nil {
		_ = c.svc.DisposeOwner(context.WithoutCancel(ctx), owner)
		return messages.Owner{}, nil, err
	}
	return owner, sessions, nil
}

// ResumeInto reattaches to owner (live, with no session on that host yet)
// the owner whose resume token is token on the named host, with its
// sessions under the ids they had. The previous client's access ends (its
// capability token stops working); the resume token stays valid, now
// owner's on that host. An unknown token, or one whose grace is over, is
// an error matching ErrOwnerNotLive. An error after the host answered
// leaves the sessions adopted so far with owner.
func (c *Client) ResumeInto(ctx context.Context, owner messages.Owner, host, token string) ([]ResumedSession, error) {
	e, err := c.hosts.named(host)
	if err != nil {
		return nil, err
	}
	r, err := ask[*linkResumeReply](ctx, c.sys, e.link, &linkResume{owner: owner, token: token})
	if err == nil {
		err = r.err
	}
	if err != nil {
		return nil, fmt.Errorf("ptyactor: resume on PTY host %q: %w", host, err)
	}
	out := make([]ResumedSession, 0, len(r.sessions))
	for _, rs := range r.sessions {
		snap := wire.SnapshotFrom(rs.GetSnapshot())
		if rs.GetClientSession() == "" {
			return out, fmt.Errorf("%w: resumed session without an id", messages.ErrTransport)
		}
		sh, err := c.core.Adopt(ctx, owner, messages.SpawnRequest{Host: host, Name: snap.Name, Type: snap.Type}, rs)
		if err != nil {
			return out, fmt.Errorf("ptyactor: adopt resumed session: %w", err)
		}
		h := sh
		rsess := ResumedSession{Session: h}
		if t := rs.GetTicket(); t != 0 {
			rsess.Latest = c.core.AwaitSend(ctx, owner, h.ID(), t)
		}
		out = append(out, rsess)
	}
	return out, nil
}

// named returns the registered host called name.
func (r *remoteHosts) named(name string) (*hostEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.hosts[name]; e != nil {
		return e, nil
	}
	return nil, messages.Errorf(messages.CodeNoHost, "no PTY host registered as %q", name)
}

// entries lists the registered hosts.
func (r *remoteHosts) entries() []*hostEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*hostEntry(nil), r.order...)
}

// unpin tells every host that owner is disposed: a host-side owner kept
// open for its resume token may now go with its last session.
func (r *remoteHosts) unpin(owner messages.Owner) {
	for _, e := range r.entries() {
		r.sys.Root.Send(e.link, &linkUnpin{owner: owner})
	}
}
