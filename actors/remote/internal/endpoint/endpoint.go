package endpoint

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Batch bounds how many messages the library packs into one gRPC message.
// Every wire message is at most wire.MaxChunk bytes of payload plus a few
// dozen of framing, so a batch stays near 2 MiB, under MaxRecv: over it,
// gRPC would refuse the whole batch and the library would drop it quietly.
const Batch = 64

// MaxRecv is the gRPC receive limit (gRPC's default, stated).
const MaxRecv = 4 << 20

// handshakeTimeout bounds how long an accepted connection may take to
// finish its TLS and HTTP/2 handshakes (gRPC allows two minutes): a peer
// that connects and stays silent holds a goroutine only that long.
const handshakeTimeout = 10 * time.Second

// DialTimeout bounds one connection attempt of the library's endpoint
// writer: TCP, TLS and HTTP/2 (it blocks that writer, never an actor of
// ours). Messages to the peer wait in the writer's mailbox meanwhile and
// go out once it is connected. An attempt that fails (this bound ran
// out, or the peer refused) is followed by the library's 2 s pause
// (remote/endpoint_writer.go initialize), after which the messages that
// waited are dropped and the next message dials again. A peer's first
// answer can therefore take up to this bound longer than its later ones:
// the host link allows for it (actors/remote/link_heartbeat.go onTick).
const DialTimeout = 2 * time.Second

// Config configures an endpoint.
type Config struct {
	// Listen is host:port; port 0 picks a free port.
	Listen string
	// TLS is the endpoint's mutual TLS: Certificates is what it presents
	// (as server and as client); ClientCAs verifies the peers that dial it
	// and RootCAs the peers it dials (either defaults to the other). A
	// peer without a certificate they verify is refused in the handshake.
	// Nil only with Insecure.
	TLS *tls.Config
	// Insecure runs without TLS; Listen must then be a loopback address.
	Insecure bool
	// Admit says which messages may enter.
	Admit Admit
	// Log receives admission refusals (never message contents).
	Log zerolog.Logger
}

// Admit is the admission rule for incoming messages.
type Admit struct {
	// Types are the protobuf full names that may enter.
	Types []string
	// Target admits the id of the local actor a message is addressed to.
	Target func(id string) bool
	// RequireSender refuses messages without a sender (requests need one
	// to answer).
	RequireSender bool
	// SenderFromPeer requires the address a peer announces (its replies go
	// there) to be on the IP the peer's connection comes from, so a peer
	// cannot have replies sent to a third party.
	SenderFromPeer bool
	// StampIdentity replaces the header of every admitted message with
	// one that names the TLS identity of the connection it came in on
	// (PeerHeader), or with none on an insecure endpoint: a local actor
	// reads who sent a message from ctx.MessageHeader(), and a peer
	// cannot claim another's identity (the library hands actors neither
	// the connection nor its certificate).
	StampIdentity bool
}

// Endpoint is a started remote endpoint.
type Endpoint struct {
	r      *remote.Remote
	addr   string
	conns  *connSet
	dialed *dialled
	adm    *admission
}

// CheckListen refuses, before anything listens, an address that is not
// host:port, and an insecure endpoint off loopback.
func CheckListen(addr string, insecure bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("listen address %q: bad port", addr)
	}
	if insecure && !Loopback(host) {
		return fmt.Errorf("listen address %s is not a loopback address: without TLS only loopback is allowed", addr)
	}
	return nil
}

// Loopback reports whether host names the loopback interface.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Start starts the endpoint on sys. A busy port is an error (the library
// itself would panic).
func Start(sys *actor.ActorSystem, cfg Config) (_ *Endpoint, err error) {
	if err := CheckListen(cfg.Listen, cfg.Insecure); err != nil {
		return nil, err
	}
	serverCreds, clientCreds, err := creds(cfg)
	if err != nil {
		return nil, err
	}
	host, portStr, _ := net.SplitHostPort(cfg.Listen)
	port, _ := strconv.Atoi(portStr)
	conns := &connSet{open: map[*trackedConn]struct{}{}}
	serverCreds = trackingCreds{serverCreds, conns}
	dialed := &dialled{id: map[string]string{}}
	clientCreds = recordingCreds{clientCreds, dialed}
	adm := &admission{cfg: cfg.Admit, log: cfg.Log, local: func() string { return sys.ProcessRegistry.Address }, stopped: make(chan struct{})}
	rc := remote.Configure(host, port,
		remote.WithServerOptions(
			grpc.Creds(serverCreds),
			grpc.ConnectionTimeout(handshakeTimeout),
			grpc.MaxRecvMsgSize(MaxRecv),
			grpc.StreamInterceptor(adm.stream),
			grpc.UnaryInterceptor(adm.unary),
		),
		remote.WithDialOptions(
			grpc.WithTransportCredentials(clientCreds),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxRecv)),
			// A failed connection is closed by Dial itself; without these
			// the library leaks each failed attempt's ClientConn.
			grpc.WithBlock(),
			grpc.FailOnNonTempDialError(true),
			grpc.WithReturnConnectionError(),
			grpc.WithTimeout(DialTimeout), //nolint:staticcheck // the library calls grpc.Dial, which has no context
		),
		remote.WithEndpointWriterBatchSize(Batch),
		remote.WithEndpointManagerBatchSize(Batch),
	)
	// One attempt per connection: the library sleeps 2 s after each failed
	// one, holding messages to that peer; the heartbeat, not the library,
	// decides that a peer is lost.
	rc.MaxRetryCount = 1
	r := remote.NewRemote(sys, rc)
	if err := start(r); err != nil {
		return nil, err
	}
	return &Endpoint{r: r, addr: sys.ProcessRegistry.Address, conns: conns, dialed: dialed, adm: adm}, nil
}

// start calls remote.Start, which panics when it cannot listen (before it
// changed anything else), and turns that into an error.
func start(r *remote.Remote) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("endpoint: %v", p)
		}
	}()
	r.Start()
	return nil
}

func creds(cfg Config) (server, client credentials.TransportCredentials, err error) {
	if cfg.Insecure {
		if cfg.TLS != nil {
			return nil, nil, errors.New("endpoint: TLS and Insecure are exclusive")
		}
		return insecure.NewCredentials(), insecure.NewCredentials(), nil
	}
	if cfg.TLS == nil || len(cfg.TLS.Certificates) == 0 && cfg.TLS.GetCertificate == nil {
		return nil, nil, errors.New("endpoint: mutual TLS needs a certificate (or Insecure on loopback)")
	}
	s, c := cfg.TLS.Clone(), cfg.TLS.Clone()
	if s.ClientCAs == nil {
		s.ClientCAs = cfg.TLS.RootCAs
	}
	if c.RootCAs == nil {
		c.RootCAs = cfg.TLS.ClientCAs
	}
	if s.ClientCAs == nil {
		return nil, nil, errors.New("endpoint: mutual TLS needs the CA that signs the peers' certificates")
	}
	s.ClientAuth = tls.RequireAndVerifyClientCert
	s.MinVersion = max(s.MinVersion, tls.VersionTLS12)
	c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
	return credentials.NewTLS(s), credentials.NewTLS(c), nil
}

// Addr is the endpoint's address: where peers reach it, and the address
// of every PID spawned on its system from now on.
func (e *Endpoint) Addr() string { return e.addr }

// DialedIdentity is the TLS identity (Identity) of the peer at addr, as
// verified by the newest connection this endpoint dialled to addr (the
// address exactly as a PID names it); "" before any such connection, and
// without TLS. What this endpoint sends to addr goes to that peer, so a
// reply that must come from it must carry its identity.
func (e *Endpoint) DialedIdentity(addr string) string { return e.dialed.get(addr) }

// closeGrace bounds the graceful stop of the gRPC server.
const closeGrace = time.Second

// Close stops the endpoint: the library's endpoint actors, then the gRPC
// server. The library waits up to 10 s for peers' streams to end, which a
// stopped peer never does; after closeGrace the server is stopped hard
// (gRPC allows Stop to cut a GracefulStop short). Even a hard stop waits
// for every accepted connection to finish its handshake, which a silent
// peer holds open for handshakeTimeout: those connections are closed
// first.
func (e *Endpoint) Close() {
	// No batch may be delivering, and no stream ending, while the
	// library stops (see admission).
	e.adm.drain(closeGrace)
	defer e.adm.stopOver()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.r.Shutdown(true)
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		// The stop is over (the graceful stop waits only on the gRPC
		// server now): release the held streams, or the hard stop below
		// waits for them.
		e.adm.stopOver()
		e.conns.closeAll()
		e.r.Shutdown(false)
		<-done
	}
}
