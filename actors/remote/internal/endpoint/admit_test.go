package endpoint

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"

	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/credentials"
)

// An admitted message carries the connection's identity, whatever header
// the peer sent; without TLS it carries none.
func TestStampIdentityReplacesThePeersHeader(t *testing.T) {
	for _, identity := range []string{"ab12", ""} {
		a := &admission{
			cfg: Admit{Types: []string{"t.Req"}, Target: func(id string) bool { return id == "gw" }, RequireSender: true, StampIdentity: true},
			log: zerolog.Nop(), local: func() string { return "127.0.0.1:1" },
		}
		s := &admitStream{a: a, announced: "127.0.0.1:2", identity: identity}
		forged := &remote.MessageHeader{HeaderData: map[string]string{PeerHeader: "someone-else", "x": "y"}}
		b := &remote.MessageBatch{
			TypeNames: []string{"t.Req"},
			Targets:   []*actor.PID{{Address: "localhost:1", Id: "gw"}},
			Senders:   []*actor.PID{{Address: "127.0.0.1:2", Id: "c"}},
			Envelopes: []*remote.MessageEnvelope{{TypeId: 0, Target: 0, Sender: 1, MessageHeader: forged}},
		}
		if err := s.checkBatch(b); err != nil {
			t.Fatal(err)
		}
		h := b.Envelopes[0].MessageHeader
		switch {
		case identity == "" && h != nil:
			t.Fatalf("no TLS: header %v kept", h.HeaderData)
		case identity != "" && (h == nil || len(h.HeaderData) != 1 || h.HeaderData[PeerHeader] != identity):
			t.Fatalf("identity %q: header %v", identity, h)
		}
	}
}

// The identity is the digest of the verified leaf's public key; an
// unverified certificate, or none, is no identity.
func TestIdentity(t *testing.T) {
	leaf := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("spki")}
	sum := sha256.Sum256([]byte("spki"))
	verified := credentials.TLSInfo{State: tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf}}}}
	if got := Identity(verified); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("verified: %q", got)
	}
	unverified := credentials.TLSInfo{State: tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}}
	if got := Identity(unverified); got != "" {
		t.Fatalf("unverified: %q", got)
	}
	if got := Identity(nil); got != "" {
		t.Fatalf("no TLS: %q", got)
	}
}
