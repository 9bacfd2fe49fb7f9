package host

// The owners and clients the gateway keeps: each owner's tokens kept only
// as hashes and found in constant time, a client's loss and its owners'
// grace, an owner's detach, resume and end.

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// client records that a client was heard. A client is its id as heard
// over one TLS identity: another admitted certificate that names the same
// id is another client, so it can neither keep this one alive with
// heartbeats nor spend its session limit.
func (g *gateway) client(id, identity string) *clientRec {
	key := identity + "/" + id
	c := g.clients[key]
	if c == nil {
		c = &clientRec{id: id, owners: map[digest]*ownerRec{}}
		g.clients[key] = c
	}
	if !c.lostAt.IsZero() {
		g.log.Info().Str("client", id).Msg("client heard again")
	}
	c.seen, c.lostAt = time.Now(), time.Time{}
	return c
}

// auth finds the owner a token names, for a client with the identity
// that opened it; nil for any other token or identity.
func (g *gateway) auth(token, id string) *ownerRec {
	rec := lookup(g.owners, token, func(r *ownerRec) digest { return r.token })
	if rec == nil || rec.identity != id {
		return nil
	}
	return rec
}

// lookup finds the owner whose digest (of key) matches token's, compared
// in constant time; nil for any other token.
func lookup(m map[digest]*ownerRec, token string, key func(*ownerRec) digest) *ownerRec {
	if token == "" {
		return nil
	}
	d := sha256.Sum256([]byte(token))
	rec := m[d]
	if rec == nil {
		return nil
	}
	if k := key(rec); subtle.ConstantTimeCompare(k[:], d[:]) != 1 {
		return nil
	}
	return rec
}

// onDetach leaves an owner's sessions to the host's grace: its client
// goes away on purpose and may resume it by its resume token.
func (g *gateway) onDetach(rec *ownerRec, call uint64, from *actor.PID) {
	if rec != nil && rec.detachedAt.IsZero() {
		rec.detachedAt = time.Now()
		g.log.Info().Str("owner", rec.owner.Label()).Dur("grace", g.cfg.ClientGrace).Msg("owner detached by its client")
	}
	g.send(from, &wire.Reply{Call: call, Body: &wire.Reply_DetachOwner{DetachOwner: &wire.DetachOwnerReply{}}})
}

// openOwner opens an owner for a client: the runtime's owner, and the two
// secrets the client holds for it (the token of its calls and the resume
// token), kept here only as hashes.
func (g *gateway) openOwner(ctx actor.Context, call uint64, lbl, id string, c *clientRec, from *actor.PID) {
	token, resume := newToken(), newToken()
	rec := &ownerRec{
		owner: messages.NewOwner(label(lbl)), token: sha256.Sum256([]byte(token)), resume: sha256.Sum256([]byte(resume)),
		identity: id, client: c, to: from, spawns: map[uint64]string{}, ids: map[messages.SessionID]string{}, tickets: map[messages.SessionID]uint64{},
	}
	r := g.relay(call, from, nil)
	r.open, r.token, r.resume = rec, token, resume
	ctx.RequestWithCustomSender(g.svc.PID(), &protocol.OpenOwner{Owner: rec.owner}, r.pid)
}

// forget drops an owner that was disposed.
func (g *gateway) forget(rec *ownerRec) {
	delete(g.owners, rec.token)
	delete(g.resumes, rec.resume)
	delete(rec.client.owners, rec.token)
	for id, o := range g.sessions {
		if o == rec {
			delete(g.sessions, id)
		}
	}
}

// checkClients marks silent clients lost and disposes the owners of those
// lost for longer than the grace.
func (g *gateway) checkClients() {
	now := time.Now()
	for key, c := range g.clients {
		if c.lostAt.IsZero() {
			if now.Sub(c.seen) > g.cfg.ClientLoss {
				c.lostAt = now
				g.log.Info().Str("client", c.id).Int("owners", len(c.owners)).Dur("grace", g.cfg.ClientGrace).Msg("client lost")
			} else {
				continue
			}
		}
		if now.Sub(c.lostAt) < g.cfg.ClientGrace {
			continue
		}
		for _, rec := range c.owners {
			g.expire(rec)
		}
		delete(g.clients, key)
	}
	for _, rec := range g.owners {
		if !rec.detachedAt.IsZero() && now.Sub(rec.detachedAt) >= g.cfg.ClientGrace {
			g.expire(rec)
		}
	}
}

// expire disposes an owner whose grace ended: its sessions close with the
// same teardown as a local close, and its tokens stop working at once.
func (g *gateway) expire(rec *ownerRec) {
	g.log.Info().Str("owner", rec.owner.Label()).Msg("grace over: disposing the owner")
	r := g.relay(0, nil, rec)
	r.internal = true
	g.sys.Root.RequestWithCustomSender(g.svc.PID(), &protocol.DisposeOwner{Owner: rec.owner}, r.pid)
	g.forget(rec)
}

// onResume hands an owner to the client that presents its resume token:
// a new capability token is minted (the previous client's stops working
// at once), pushes go to the new client, and the owner's grace ends. The
// reply lists its sessions as they are now (List). An unknown resume
// token, or one presented by a client with another TLS identity than the
// client that opened the owner, is answered as an owner that is not live,
// and changes nothing.
func (g *gateway) onResume(ctx actor.Context, call uint64, resume, id string, c *clientRec, from *actor.PID) {
	rec := lookup(g.resumes, resume, func(r *ownerRec) digest { return r.resume })
	if rec == nil || rec.identity != id {
		g.fail(from, call, messages.Errorf(messages.CodeOwnerNotLive, "unknown resume token, or its owner's grace is over"))
		return
	}
	token := newToken()
	delete(g.owners, rec.token)
	delete(rec.client.owners, rec.token)
	rec.token = sha256.Sum256([]byte(token))
	g.owners[rec.token] = rec
	rec.client, rec.to, rec.detachedAt = c, from, time.Time{}
	c.owners[rec.token] = rec
	g.log.Info().Str("owner", rec.owner.Label()).Str("client", c.id).Msg("owner resumed by a client")
	r := g.relay(call, from, rec)
	r.resumed, r.token = rec, token
	ctx.RequestWithCustomSender(g.svc.PID(), &protocol.List{Owner: rec.owner}, r.pid)
}

// newToken mints a secret: 256 random bits.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux ≥ 3.17 and panics otherwise
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sessionsOf counts a client's sessions: published, and spawns in flight.
func (g *gateway) sessionsOf(c *clientRec) int {
	n := 0
	for _, rec := range g.sessions {
		if rec.client == c {
			n++
		}
	}
	for _, rec := range c.owners {
		n += len(rec.spawns)
	}
	return n
}
