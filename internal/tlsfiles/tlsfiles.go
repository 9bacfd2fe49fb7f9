// Package tlsfiles loads the TLS certificates, keys and CAs that the
// commands' flags name (ptymcp's -http-tls-*, -console-tls-* and
// -host-tls-*, ptyhost's -tls-*), with errors that name those flags.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Load reads a certificate and its key and, when ca is set, the CA that
// signs the peers' certificates, for mutual TLS: the one pool checks the
// peer whichever way the connection goes (ClientCAs when serving, RootCAs
// when dialling). Without ca the config only presents the certificate.
// Errors name the flags: prefix is their common stem ("-tls" names
// -tls-cert, -tls-key and -tls-ca).
func Load(prefix, cert, key, ca string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("%s-cert/%s-key: %w", prefix, prefix, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if ca == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("%s-ca: %w", prefix, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s-ca %s: no PEM certificate in it", prefix, ca)
	}
	cfg.ClientCAs, cfg.RootCAs = pool, pool
	return cfg, nil
}
