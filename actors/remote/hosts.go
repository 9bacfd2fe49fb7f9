package remote

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyactor/ptyactor/actors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/remote/internal/endpoint"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// Remote hosts, client side. A registered host has a link actor (one per
// host, link.go) that speaks the wire protocol to the host's
// gateway, heartbeats, and declares the host lost after a silence; a
// session placed on a host is served by a proxy session actor
// (session.go) under its owner, in the place of sessionActor.

// Heartbeat defaults: a host silent for DefaultHostLossAfter is lost, and
// every operation pending on it fails with messages.ErrHostLost. gRPC
// keepalive cannot see a stopped peer in less than 10 s, and protoactor
// never fails a pending request on node loss: this heartbeat does both.
const (
	DefaultHeartbeatEvery = 250 * time.Millisecond
	DefaultHostLossAfter  = 1500 * time.Millisecond
)

// HostOption configures RegisterHost.
type HostOption func(*hostOptions)

type hostOptions struct {
	insecure  bool
	listen    string
	every     time.Duration
	lossAfter time.Duration
}

// HostInsecure talks to the host without TLS. Both the host's address and
// the client's endpoint must then be on loopback (development and tests).
func HostInsecure() HostOption { return func(o *hostOptions) { o.insecure = true } }

// HostListen sets the address of the client's endpoint, which hosts dial
// to answer (default 127.0.0.1:0). The first RegisterHost starts it; later
// ones share it.
func HostListen(addr string) HostOption { return func(o *hostOptions) { o.listen = addr } }

// HostHeartbeat sets how often the host is asked whether it lives, and the
// silence after which it is lost (before the host's first answer, 2 s
// more: the first contact includes dialling it).
func HostHeartbeat(every, lossAfter time.Duration) HostOption {
	return func(o *hostOptions) { o.every, o.lossAfter = every, lossAfter }
}

// remoteHosts is a Service's registry of hosts and its endpoint. The
// service actor reads it (under mu, never blocking) to place a spawn.
type remoteHosts struct {
	sys *actor.ActorSystem

	mu       sync.Mutex
	ep       *endpoint.Endpoint
	insecure bool
	hosts    map[string]*hostEntry
	order    []*hostEntry
	client   string // this client's id on every host (random, not secret)

	// links: the ids of the live link actors, the only targets the
	// endpoint admits (random, so a peer cannot name one it was not told).
	lmu   sync.Mutex
	links map[string]bool
}

type hostEntry struct {
	name, addr string
	link       *actor.PID
	sessions   atomic.Int64 // proxies on it: the placement's measure
	lost       atomic.Bool

	// What a message must show to count as the host's (hostLink.fromHost):
	// from, the addresses its gateway may send from (addr, and addr with
	// its host name resolved); with tls, the identity of the certificate
	// the client's own connection to addr verified (identity()).
	from     []string
	tls      bool
	identity func() string
}

// newCall returns a fresh call id for this host's wire: random, so that a
// peer cannot answer a call it did not see; never 0 (a push).
func (h *hostEntry) newCall() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux ≥ 3.17 and panics otherwise
		if c := binary.LittleEndian.Uint64(b[:]); c != 0 {
			return c
		}
	}
}

// newLinkID names a host link: wire.LinkPrefix and 128 random bits.
func newLinkID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return wire.LinkPrefix + hex.EncodeToString(b[:])
}

func (r *remoteHosts) isLink(id string) bool {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	return r.links[id]
}

func (r *remoteHosts) setLink(id string, live bool) {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if live {
		r.links[id] = true
	} else {
		delete(r.links, id)
	}
}

// replyAddrs lists the addresses a host dialled at addr may answer from:
// addr itself, and each address its host name resolves to with addr's
// port (a host reached as localhost announces 127.0.0.1).
func replyAddrs(ctx context.Context, addr string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	out := []string{addr}
	if ip := net.ParseIP(host); ip != nil {
		if a := net.JoinHostPort(ip.String(), port); a != addr {
			out = append(out, a) // [::0001]:7400 is [::1]:7400
		}
		return out, nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		out = append(out, net.JoinHostPort(ip.IP.String(), port))
	}
	return out, nil
}

func newRemoteHosts(sys *actor.ActorSystem) *remoteHosts {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &remoteHosts{sys: sys, hosts: map[string]*hostEntry{}, links: map[string]bool{}, client: "client-" + hex.EncodeToString(b[:])}
}

var _ seam.Room = (*remoteHosts)(nil)

// Check is seam.Room's: the named host is registered, or with AnyHost
// some host is live.
func (r *remoteHosts) Check(host string) error {
	_, err := r.find(host)
	return err
}

// Place is seam.Room's: it picks the host (counting the session on it);
// adopt is a *wire.ResumedSession from ResumeInto.
func (r *remoteHosts) Place(host string, adopt any) (seam.Place, error) {
	e, err := r.pick(host)
	if err != nil {
		return nil, err
	}
	p := &hostPlace{host: e}
	p.adopt, _ = adopt.(*wire.ResumedSession)
	return p, nil
}

// OwnerDisposed is seam.Room's: see unpin.
func (r *remoteHosts) OwnerDisposed(owner messages.Owner) { r.unpin(owner) }

// Close is seam.Room's: see close.
func (r *remoteHosts) Close(ctx context.Context) error { return r.close(ctx, r.sys) }

// hostPlace is a session's place on a host: a proxy session actor.
type hostPlace struct {
	host *hostEntry
	// adopt: the session runs there already (a resumed owner's); its id
	// is the one its client gave it.
	adopt *wire.ResumedSession
}

func (p *hostPlace) ID() messages.SessionID {
	return messages.SessionID(p.adopt.GetClientSession())
}

func (p *hostPlace) Actor(spec messages.SpawnSpec, env seam.Env) actor.Actor {
	clock, _ := env.Clock.(actors.Clock)
	return newRemoteSession(spec.SessionID, spec.Owner, spec, p.host, p.adopt, env.Config, clock, env.Log.With().Str("host", p.host.name).Logger())
}

func (p *hostPlace) Release() { p.host.sessions.Add(-1) }

// find checks that a spawn can be placed: the named host is registered,
// or with AnyHost some host is live.
func (r *remoteHosts) find(name string) (*hostEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.choose(name)
}

// pick chooses the host for a spawn and counts the session on it: the
// named one, or with AnyHost the live host with the fewest sessions.
func (r *remoteHosts) pick(name string) (*hostEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.choose(name)
	if err != nil {
		return nil, err
	}
	h.sessions.Add(1)
	return h, nil
}

func (r *remoteHosts) choose(name string) (*hostEntry, error) {
	var h *hostEntry
	if name == messages.AnyHost {
		for _, e := range r.order {
			if !e.lost.Load() && (h == nil || e.sessions.Load() < h.sessions.Load()) {
				h = e
			}
		}
		if h == nil {
			return nil, messages.Errorf(messages.CodeNoHost, "no live PTY host is registered")
		}
	} else if h = r.hosts[name]; h == nil {
		return nil, messages.Errorf(messages.CodeNoHost, "no PTY host registered as %q", name)
	}
	return h, nil
}

// RegisterHost connects the service to a ptyhost at addr under name, so
// spawns can be placed there (SpawnRequest.Host = name, or AnyHost). It
// returns once the host answered a heartbeat, or ctx ended, or the host
// stayed silent past the loss timeout plus the bound on dialling it
// (3.5 s by default: before its first answer a host is allowed the dial
// too; an error matching ErrHostLost; a refused certificate looks the
// same from here).
//
// tlsConfig is the client's mutual TLS: Certificates (the client's
// certificate, presented to the host and when the host dials back) and
// RootCAs (the CA that signs host certificates; it also verifies the host
// when it dials the client's endpoint). The client runs a remote endpoint
// of its own, because the host answers by dialling the client (protoactor
// remote has no replies on the client's connection): see HostListen.
func (c *Client) RegisterHost(ctx context.Context, name, addr string, tlsConfig *tls.Config, opts ...HostOption) error {
	o := hostOptions{listen: "127.0.0.1:0", every: DefaultHeartbeatEvery, lossAfter: DefaultHostLossAfter}
	for _, f := range opts {
		f(&o)
	}
	if err := o.check(name, addr, tlsConfig); err != nil {
		return err
	}
	from, err := replyAddrs(ctx, addr)
	if err != nil {
		return fmt.Errorf("ptyactor: PTY host %q at %s: %w", name, addr, err)
	}
	r := c.hosts
	r.mu.Lock()
	if _, dup := r.hosts[name]; dup {
		r.mu.Unlock()
		return messages.InvalidArgument("PTY host %q is already registered", name)
	}
	ep, err := c.endpoint(o, tlsConfig)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	e := &hostEntry{name: name, addr: addr, from: from, tls: !o.insecure, identity: func() string { return ep.DialedIdentity(addr) }}
	// Spawned after the endpoint started, so the link's PID carries the
	// endpoint's address: the host answers there. Admitted from before
	// it exists: the host's first answer may come before SpawnNamed
	// returns.
	id := newLinkID()
	r.setLink(id, true)
	l := newHostLink(e, r.client, o.every, o.lossAfter, c.core.Log())
	e.link, err = c.sys.Root.SpawnNamed(actorkit.Props(l), id)
	r.mu.Unlock()
	if err != nil {
		r.setLink(id, false)
		return fmt.Errorf("ptyactor: spawn host link: %w", err)
	}
	if err := c.hello(ctx, e); err != nil {
		_ = c.sys.Root.PoisonFuture(e.link).Wait()
		r.setLink(id, false)
		return err
	}
	return nil
}

// check refuses a registration that could never work: a bad name or
// address, heartbeat timings that lose every host, TLS and insecure both
// or neither, or insecure off loopback.
func (o hostOptions) check(name, addr string, tlsConfig *tls.Config) error {
	switch {
	case name == "" || name == messages.AnyHost || strings.TrimSpace(name) != name:
		return messages.InvalidArgument("PTY host name must be non-empty, without surrounding spaces, and not %q", messages.AnyHost)
	case o.every <= 0 || o.lossAfter <= o.every:
		return messages.InvalidArgument("heartbeat: want 0 < every < lossAfter")
	case o.insecure && tlsConfig != nil:
		return messages.InvalidArgument("HostInsecure and a TLS configuration are exclusive")
	case !o.insecure && tlsConfig == nil:
		return messages.InvalidArgument("a PTY host needs mutual TLS (or HostInsecure on loopback)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return messages.InvalidArgument("PTY host address %q: %v", addr, err)
	}
	if o.insecure && !endpoint.Loopback(host) {
		return messages.InvalidArgument("PTY host %s is not on loopback: it needs mutual TLS", addr)
	}
	return nil
}

// endpoint returns the client's endpoint, starting it with the first
// host; every later host must agree on TLS. The caller holds hosts.mu.
func (c *Client) endpoint(o hostOptions, tlsConfig *tls.Config) (*endpoint.Endpoint, error) {
	r := c.hosts
	if r.ep != nil {
		if r.insecure != o.insecure {
			return nil, messages.InvalidArgument("all PTY hosts of a service use TLS, or none does")
		}
		return r.ep, nil
	}
	ep, err := endpoint.Start(c.sys, endpoint.Config{
		Listen: o.listen, TLS: tlsConfig, Insecure: o.insecure, Log: c.core.Log(),
		// Only a live link, from a sender on the address its
		// connection comes from, with the connection's identity
		// stamped: each link then checks that the sender is its
		// host's gateway and the identity its host's.
		Admit: endpoint.Admit{
			Types:          []string{wire.ReplyType, wire.ChunkType},
			Target:         r.isLink,
			RequireSender:  true,
			SenderFromPeer: true,
			StampIdentity:  true,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("ptyactor: client endpoint: %w", err)
	}
	r.ep, r.insecure = ep, o.insecure
	return ep, nil
}

// hello waits for the host's first answer through its new link, then
// lists the host, unless a registration of the same name won meanwhile.
func (c *Client) hello(ctx context.Context, e *hostEntry) error {
	hello, err := ask[*linkHelloReply](ctx, c.sys, e.link, &linkHello{})
	if err == nil {
		err = hello.err
	}
	if err != nil {
		return fmt.Errorf("ptyactor: PTY host %q at %s: %w", e.name, e.addr, err)
	}
	r := c.hosts
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.hosts[e.name]; dup {
		return messages.InvalidArgument("PTY host %q is already registered", e.name)
	}
	r.hosts[e.name] = e
	r.order = append(r.order, e)
	return nil
}

// Hosts lists the registered hosts' names in registration order.
func (c *Client) Hosts() []string {
	c.hosts.mu.Lock()
	defer c.hosts.mu.Unlock()
	out := make([]string, len(c.hosts.order))
	for i, e := range c.hosts.order {
		out[i] = e.name
	}
	return out
}

// close ends every link (each first disposes its owners on its host, as
// far as the host answers) and stops the endpoint. Called by Shutdown
// once every owner is disposed.
func (r *remoteHosts) close(ctx context.Context, sys *actor.ActorSystem) error {
	r.mu.Lock()
	ep, hosts := r.ep, r.order
	r.ep, r.order, r.hosts = nil, nil, map[string]*hostEntry{}
	r.mu.Unlock()
	var errs []error
	for _, e := range hosts {
		if _, err := ask[*linkClosed](ctx, sys, e.link, &linkClose{}); err != nil && !errors.Is(err, actorkit.ErrGone) {
			errs = append(errs, err)
		}
		if err := sys.Root.PoisonFuture(e.link).Wait(); err != nil {
			errs = append(errs, err)
		}
		r.setLink(e.link.Id, false)
	}
	if ep != nil {
		ep.Close()
	}
	return errors.Join(errs...)
}
