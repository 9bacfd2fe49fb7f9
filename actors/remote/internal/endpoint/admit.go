package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/remote"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// receiveMethod is the library's one streaming call.
const receiveMethod = "/remote.Remoting/Receive"

type admission struct {
	cfg   Admit
	log   zerolog.Logger
	local func() string // this endpoint's address

	// The delivery gate. The pinned library's Shutdown writes state its
	// reader reads while delivering a batch (a dead letter's answer goes
	// out through the endpoint manager being stopped): Close closes the
	// gate and waits for the batches in the library's hands first. A
	// stream's batch is in its hands from RecvMsg's return until the
	// library asks for the next one or the stream ends.
	//
	// The same library's Shutdown also sends on each reader's disconnect
	// channel, which the reader closes when its stream ends: a stream that
	// ends while the library stops races it (and may panic it). So once
	// closing, no stream's read returns an error until the library told
	// that stream it is leaving (its DisconnectRequest, sent through
	// SendMsg) or the stop is over; Close waits for the streams already
	// ending (ending) with the batches.
	mu      sync.Mutex
	closing bool
	busy    int
	ending  int           // streams whose read failed before closing, handler not yet returned
	idle    chan struct{} // closed once closing, and busy and ending are 0
	stopped chan struct{} // closed once the library's stop is over
}

// hold counts a batch handed to the library; false once closing.
func (a *admission) hold() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.busy++
	return true
}

// release ends a held batch.
func (a *admission) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.busy--
	a.checkIdle()
}

// checkIdle closes idle once nothing is in the library's hands; the caller
// holds mu.
func (a *admission) checkIdle() {
	if a.closing && a.busy == 0 && a.ending == 0 {
		select {
		case <-a.idle:
		default:
			close(a.idle)
		}
	}
}

// stopOver releases the streams held by the stop (see admission).
func (a *admission) stopOver() {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-a.stopped:
	default:
		close(a.stopped)
	}
}

// drain closes the gate and waits, at most bound, until no batch is in the
// library's hands.
func (a *admission) drain(bound time.Duration) {
	a.mu.Lock()
	a.closing = true
	a.idle = make(chan struct{})
	a.checkIdle()
	idle := a.idle
	a.mu.Unlock()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// unary refuses the library's unary calls (ListProcesses and
// GetProcessDiagnostics panic with "implement me").
func (a *admission) unary(_ context.Context, _ any, info *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
	return nil, status.Errorf(codes.Unimplemented, "%s is not served", info.FullMethod)
}

// stream admits the library's Receive stream, checking every message it
// reads, and recovers a panic inside the library's handler.
func (a *admission) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	if info.FullMethod != receiveMethod {
		return status.Errorf(codes.Unimplemented, "%s is not served", info.FullMethod)
	}
	s := &admitStream{ServerStream: ss, a: a, told: make(chan struct{})}
	if p, ok := peer.FromContext(ss.Context()); ok {
		if ta, ok := p.Addr.(*net.TCPAddr); ok {
			s.peerIP = ta.IP
		}
		s.identity = Identity(p.AuthInfo)
	}
	defer func() {
		if p := recover(); p != nil {
			a.log.Error().Interface("panic", p).Msg("remote endpoint: the library's stream handler panicked; stream closed")
			err = status.Error(codes.Internal, "internal error")
		}
	}()
	defer s.done()
	defer s.ended()
	return handler(srv, s)
}

type admitStream struct {
	grpc.ServerStream
	a         *admission
	peerIP    net.IP
	announced string // the address the peer announced in its ConnectRequest
	identity  string // the peer's TLS identity (see Identity); "" without TLS
	holding   bool   // a batch of this stream is in the library's hands
	ending    bool   // counted in the admission's ending
	// told is closed when the library told this stream it is leaving.
	told     chan struct{}
	toldOnce sync.Once
}

// done releases the batch the library had (it asks for the next one, or
// the stream ended).
func (s *admitStream) done() {
	if s.holding {
		s.holding = false
		s.a.release()
	}
}

// PeerHeader is the message header that carries, to the local actor, the
// TLS identity of the connection a message came in on (see Identity), when
// Admit.StampIdentity is set. The admission check writes it on every
// admitted message, replacing whatever header the peer sent, so its value
// is the connection's, never the peer's word; without TLS there is no
// header.
const PeerHeader = "ptyactor-peer-spki"

// Identity is the TLS identity of a gRPC peer: the hex SHA-256 of the
// public key (SubjectPublicKeyInfo) of the certificate the handshake
// verified. A certificate re-issued for the same key has the same
// identity. "" when the connection has no verified certificate (an
// insecure endpoint).
func Identity(info credentials.AuthInfo) string {
	ti, ok := info.(credentials.TLSInfo)
	if !ok || len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
		return ""
	}
	sum := sha256.Sum256(ti.State.VerifiedChains[0][0].RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}

func (s *admitStream) RecvMsg(m any) error {
	s.done()
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return s.end(err)
	}
	rm, ok := m.(*remote.RemoteMessage)
	if !ok {
		return s.end(status.Error(codes.InvalidArgument, "unexpected message"))
	}
	if err := s.check(rm); err != nil {
		s.a.log.Warn().Err(err).Str("peer", s.peerIP.String()).Msg("remote endpoint: message refused; stream closed")
		return s.end(status.Error(codes.PermissionDenied, err.Error()))
	}
	if !s.a.hold() {
		return s.end(status.Error(codes.Unavailable, "endpoint closing"))
	}
	s.holding = true
	return nil
}

// end returns err, the read that ends the stream: at once, counted until
// the handler returned, unless the endpoint is closing; then only once the
// library told this stream it is leaving, or its stop is over.
func (s *admitStream) end(err error) error {
	a := s.a
	a.mu.Lock()
	if !a.closing {
		a.ending++
		s.ending = true
		a.mu.Unlock()
		return err
	}
	a.mu.Unlock()
	select {
	case <-s.told:
	case <-a.stopped:
	}
	return err
}

// ended uncounts a stream that ended before closing, once its handler
// returned.
func (s *admitStream) ended() {
	if !s.ending {
		return
	}
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ending--
	a.checkIdle()
}

// SendMsg sends, and notes the library's DisconnectRequest: its stop has
// dealt with this stream's disconnect channel.
func (s *admitStream) SendMsg(m any) error {
	if rm, ok := m.(*remote.RemoteMessage); ok && rm.GetDisconnectRequest() != nil {
		defer s.toldOnce.Do(func() { close(s.told) })
	}
	return s.ServerStream.SendMsg(m)
}

func (s *admitStream) check(rm *remote.RemoteMessage) error {
	switch t := rm.MessageType.(type) {
	case *remote.RemoteMessage_ConnectRequest:
		sc := t.ConnectRequest.GetServerConnection()
		if sc == nil || s.announced != "" {
			return errors.New("only one server connect request per stream")
		}
		host, _, err := net.SplitHostPort(sc.Address)
		if err != nil {
			return fmt.Errorf("announced address %q: %w", sc.Address, err)
		}
		if s.a.cfg.SenderFromPeer {
			if ip := net.ParseIP(host); ip == nil || !ip.Equal(s.peerIP) {
				return fmt.Errorf("announced address %s is not on the connection's IP %s", sc.Address, s.peerIP)
			}
		}
		s.announced = sc.Address
		return nil
	case *remote.RemoteMessage_MessageBatch:
		if s.announced == "" {
			return errors.New("message batch before the connect request")
		}
		return s.checkBatch(t.MessageBatch)
	default:
		return fmt.Errorf("unexpected %T", t)
	}
}

// checkBatch admits a batch only if every envelope is an admitted type,
// protobuf-encoded, addressed to an admitted local actor, from a sender on
// the announced address; every index must be in range (the library
// indexes without checking). Admitted targets are rewritten to this
// endpoint's own address, so an alias the peer dialled (localhost for
// 127.0.0.1) still reaches the local actor instead of being sent on.
func (s *admitStream) checkBatch(b *remote.MessageBatch) error {
	if len(b.Envelopes) == 0 {
		return errors.New("empty batch")
	}
	for _, e := range b.Envelopes {
		if e.TypeId < 0 || int(e.TypeId) >= len(b.TypeNames) || !slices.Contains(s.a.cfg.Types, b.TypeNames[e.TypeId]) {
			return errors.New("message type not admitted")
		}
		if e.SerializerId != 0 {
			return errors.New("only protobuf-encoded messages are admitted")
		}
		if e.Target < 0 || int(e.Target) >= len(b.Targets) || b.Targets[e.Target] == nil || !s.a.cfg.Target(b.Targets[e.Target].Id) {
			return errors.New("target not admitted")
		}
		switch {
		case e.Sender < 0 || int(e.Sender) > len(b.Senders):
			return errors.New("sender out of range")
		case e.Sender == 0 && s.a.cfg.RequireSender:
			return errors.New("a request needs a sender")
		case e.Sender > 0 && (b.Senders[e.Sender-1] == nil || b.Senders[e.Sender-1].Address != s.announced):
			return errors.New("sender not on the announced address")
		}
	}
	if s.a.cfg.StampIdentity {
		for _, e := range b.Envelopes {
			e.MessageHeader = nil
			if s.identity != "" {
				e.MessageHeader = &remote.MessageHeader{HeaderData: map[string]string{PeerHeader: s.identity}}
			}
		}
	}
	local := s.a.local()
	for _, t := range b.Targets {
		if t != nil {
			t.Address = local
		}
	}
	return nil
}
