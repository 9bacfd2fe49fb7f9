package tlsfiles

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCA writes a CA certificate and two leaves it signed (a server for
// 127.0.0.1 and a client), and returns their files.
func writeCA(t *testing.T) (caFile, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, usage x509.ExtKeyUsage, name string) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", kder)
	}
	caFile = write("ca.crt", "CERTIFICATE", caDER)
	srvCert, srvKey = leaf(2, x509.ExtKeyUsageServerAuth, "server")
	cliCert, cliKey = leaf(3, x509.ExtKeyUsageClientAuth, "client")
	return
}

// TestLoadMutual: a host's and a client's configs, loaded the same way,
// complete a handshake in which each side checks the other against the CA.
func TestLoadMutual(t *testing.T) {
	caFile, srvCert, srvKey, cliCert, cliKey := writeCA(t)
	srv, err := Load("-tls", srvCert, srvKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := Load("-host-tls", cliCert, cliKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	if srv.MinVersion != tls.VersionTLS12 || srv.ClientCAs == nil || srv.RootCAs == nil {
		t.Fatalf("config: %+v", srv)
	}
	srv.ClientAuth = tls.RequireAndVerifyClientCert
	cli.ServerName = "127.0.0.1"
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() { done <- tls.Server(a, srv).Handshake() }()
	if err := tls.Client(b, cli).Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
}

// TestLoadServerOnly: without a CA the config presents the certificate
// and checks nobody (ptymcp's HTTPS listener).
func TestLoadServerOnly(t *testing.T) {
	_, srvCert, srvKey, _, _ := writeCA(t)
	cfg, err := Load("-http-tls", srvCert, srvKey, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Certificates) != 1 || cfg.ClientCAs != nil || cfg.RootCAs != nil || cfg.MinVersion != tls.VersionTLS12 {
		t.Fatalf("config: %+v", cfg)
	}
}

// TestLoadErrors: each error names the flags it came from.
func TestLoadErrors(t *testing.T) {
	caFile, srvCert, srvKey, _, _ := writeCA(t)
	missing := filepath.Join(t.TempDir(), "missing")
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cert, key, ca, want string
	}{
		{missing, srvKey, caFile, "-host-tls-cert/-host-tls-key: open " + missing},
		{srvCert, missing, caFile, "-host-tls-cert/-host-tls-key: open " + missing},
		{srvCert, srvKey, missing, "-host-tls-ca: open " + missing},
		{srvCert, srvKey, notPEM, "-host-tls-ca " + notPEM + ": no PEM certificate in it"},
	} {
		_, err := Load("-host-tls", tc.cert, tc.key, tc.ca)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Load(%s, %s, %s): %v, want %q", tc.cert, tc.key, tc.ca, err, tc.want)
		}
	}
}
