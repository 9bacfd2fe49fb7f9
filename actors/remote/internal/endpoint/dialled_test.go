package endpoint

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// handshaker answers every client handshake with info, or err.
type handshaker struct {
	credentials.TransportCredentials
	info credentials.AuthInfo
	err  error
}

func (h handshaker) ClientHandshake(_ context.Context, _ string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return raw, h.info, h.err
}

func (h handshaker) Clone() credentials.TransportCredentials { return h }

// The identity a dial verified is recorded under the address dialled; a
// later failed handshake does not erase it, a later successful one
// replaces it.
func TestDialedIdentity(t *testing.T) {
	leaf := func(spki string) credentials.AuthInfo {
		c := &x509.Certificate{RawSubjectPublicKeyInfo: []byte(spki)}
		return credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{c}}}}
	}
	d := &dialled{id: map[string]string{}}
	e := &Endpoint{dialed: d}
	hs := func(info credentials.AuthInfo, err error) {
		c := recordingCreds{handshaker{insecure.NewCredentials(), info, err}, d}.Clone()
		_, _, _ = c.ClientHandshake(context.Background(), "h:1", nil)
	}
	if got := e.DialedIdentity("h:1"); got != "" {
		t.Fatalf("before any dial: %q", got)
	}
	hs(leaf("host"), nil)
	host := Identity(leaf("host"))
	if got := e.DialedIdentity("h:1"); got != host || e.DialedIdentity("h:2") != "" {
		t.Fatalf("after the dial: %q", got)
	}
	hs(nil, errors.New("refused"))
	if got := e.DialedIdentity("h:1"); got != host {
		t.Fatalf("after a failed dial: %q", got)
	}
	hs(leaf("new key"), nil)
	if got := e.DialedIdentity("h:1"); got != Identity(leaf("new key")) {
		t.Fatalf("after a new key: %q", got)
	}
}
