package host

import (
	"crypto/tls"
	"errors"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote/internal/endpoint"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultClientLoss      = 1500 * time.Millisecond
	DefaultClientGrace     = 5 * time.Minute // ptyhost -client-grace
	DefaultMaxRequestBytes = 16 << 20
	// DefaultMaxSessionsPerClient is ptyhost -max-sessions-per-client's
	// default: a client cannot exhaust the host's descriptors and
	// processes with spawns.
	DefaultMaxSessionsPerClient = 64
)

// Config configures a Host.
type Config struct {
	// Listen is the address to serve on (host:port; port 0 picks one).
	Listen string
	// TLS is the host's mutual TLS: Certificates (the host's certificate,
	// presented to clients and when dialling them back) and ClientCAs (the
	// CA that signs client certificates; it also verifies a client's
	// endpoint when the host dials it). Nil only with Insecure.
	TLS *tls.Config
	// Insecure serves without TLS; Listen must then be a loopback address.
	Insecure bool
	// ClientLoss is the heartbeat silence after which a client is lost;
	// zero means DefaultClientLoss.
	ClientLoss time.Duration
	// ClientGrace is how long a lost client's owners (and owners their
	// client detached) are kept, for a client to resume them with their
	// resume token, before they are disposed (their sessions closed, trees
	// torn down); zero disposes them as soon as the client is lost.
	ClientGrace time.Duration
	// MaxSessionsPerClient bounds the sessions one client (by its client
	// id) may have open or starting on this host; zero means no limit
	// (ptyhost's -max-sessions-per-client defaults to
	// DefaultMaxSessionsPerClient).
	MaxSessionsPerClient int
	// MaxRequestBytes bounds one request (a send's text, reassembled from
	// chunks); zero means DefaultMaxRequestBytes.
	MaxRequestBytes int
	// Log receives the host's logs; tokens never appear in them.
	Log zerolog.Logger
}

// Host serves a Service to remote clients.
type Host struct {
	svc *actors.Service
	ep  *endpoint.Endpoint
	gw  *actor.PID
}

// Start serves svc on cfg.Listen. It returns an error, before anything
// listens, for an insecure address off loopback or a TLS setup without a
// certificate or client CA, and an error (not a panic) when the address
// is in use.
func Start(svc *actors.Service, cfg Config) (*Host, error) {
	if err := endpoint.CheckListen(cfg.Listen, cfg.Insecure); err != nil {
		return nil, err
	}
	if cfg.ClientLoss <= 0 {
		cfg.ClientLoss = DefaultClientLoss
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.ClientGrace < 0 {
		return nil, errors.New("host: ClientGrace must not be negative")
	}
	sys := svc.System()
	g := newGateway(svc, cfg)
	// The gateway exists before the endpoint admits anything: no request
	// can reach an empty address.
	gw, err := sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return g },
		actor.WithGuardian(&gatewaySupervisor{g: g})), wire.GatewayID)
	if err != nil {
		return nil, err
	}
	ep, err := endpoint.Start(sys, endpoint.Config{
		Listen: cfg.Listen, TLS: cfg.TLS, Insecure: cfg.Insecure, Log: cfg.Log,
		Admit: endpoint.Admit{
			Types:          []string{wire.RequestType, wire.ChunkType},
			Target:         func(id string) bool { return id == wire.GatewayID },
			RequireSender:  true,
			SenderFromPeer: true,
			StampIdentity:  true,
		},
	})
	if err != nil {
		_ = sys.Root.PoisonFuture(gw).Wait()
		return nil, err
	}
	cfg.Log.Info().Str("address", ep.Addr()).Bool("tls", !cfg.Insecure).Msg("ptyhost serving")
	return &Host{svc: svc, ep: ep, gw: gw}, nil
}

// Addr is the address clients reach the host at.
func (h *Host) Addr() string { return h.ep.Addr() }

// Close stops serving: the gateway, then the endpoint. It does not dispose
// the service's owners; Service.Shutdown does.
func (h *Host) Close() {
	_ = h.svc.System().Root.PoisonFuture(h.gw).Wait()
	h.ep.Close()
}

// label bounds a client-chosen owner label for the logs.
func label(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return "remote:" + s
}

// CheckListen refuses, before anything listens, an address that is not
// host:port and an insecure address off loopback.
func CheckListen(addr string, insecure bool) error { return endpoint.CheckListen(addr, insecure) }
