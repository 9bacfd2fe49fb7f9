package mcpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/internal/tlsfiles"
	"github.com/ptyactor/ptyactor/messages"
)

// HostsConfig is the remote-host settings: with Addrs, terminals open on
// those session hosts (the least busy) instead of this machine.
type HostsConfig struct {
	// Addrs are the hosts (-host), registered as h0, h1, ... in order.
	Addrs HostList
	// Cert, Key and CA are this client's PEM certificate and key, and
	// the CA of the hosts' certificates, for mutual TLS (-host-tls-cert,
	// -host-tls-key, -host-tls-ca).
	Cert string
	Key  string
	CA   string
	// Insecure reaches loopback hosts without TLS (-host-insecure).
	Insecure bool
	// Listen is the address hosts dial back (-host-listen; default
	// 127.0.0.1:0).
	Listen string
	// ResumeFile keeps the stdio connection's terminals on the hosts when
	// it ends, to resume them in the next server (-resume-file,
	// resume.go).
	ResumeFile string
}

// HostList is the repeatable -host flag.
type HostList []string

func (l *HostList) String() string { return strings.Join(*l, ",") }

// Set adds a host:port.
func (l *HostList) Set(s string) error {
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Errorf("-host %q: want host:port: %w", s, err)
	}
	*l = append(*l, s)
	return nil
}

// check refuses inconsistent host flags before anything starts: without
// TLS only loopback hosts, and TLS needs all three files.
func (h HostsConfig) check() error {
	if len(h.Addrs) == 0 {
		if h.ResumeFile != "" {
			return errors.New("-resume-file keeps terminals on session hosts: it needs -host")
		}
		return nil
	}
	tlsGiven := h.Cert != "" || h.Key != "" || h.CA != ""
	switch {
	case h.Insecure && tlsGiven:
		return errors.New("-host-insecure and -host-tls-* exclude each other")
	case !h.Insecure && (h.Cert == "" || h.Key == "" || h.CA == ""):
		return errors.New("-host needs mutual TLS (-host-tls-cert, -host-tls-key, -host-tls-ca), or -host-insecure for loopback hosts")
	}
	if h.Insecure {
		for _, a := range h.Addrs {
			host, _, _ := net.SplitHostPort(a)
			if !loopbackHost(host) {
				return fmt.Errorf("-host %s is not a loopback address: -host-insecure only reaches loopback hosts", a)
			}
		}
	}
	return nil
}

// tlsConfig loads the client's certificate and the hosts' CA.
func (h HostsConfig) tlsConfig() (*tls.Config, error) {
	if h.Insecure {
		return nil, nil
	}
	return tlsfiles.Load("-host-tls", h.Cert, h.Key, h.CA)
}

// register connects the hosts (h0, h1, ... in flag order) and returns the
// placement for new terminals.
func (h HostsConfig) register(ctx context.Context, svc *actors.Service) (string, error) {
	if len(h.Addrs) == 0 {
		return "", nil
	}
	cfg, err := h.tlsConfig()
	if err != nil {
		return "", err
	}
	var opts []remote.HostOption
	if h.Insecure {
		opts = append(opts, remote.HostInsecure())
	}
	if h.Listen != "" {
		opts = append(opts, remote.HostListen(h.Listen))
	}
	c, err := remote.Attach(svc)
	if err != nil {
		return "", err
	}
	for i, a := range h.Addrs {
		if err := c.RegisterHost(ctx, hostName(i), a, cfg, opts...); err != nil {
			return "", fmt.Errorf("-host %s: %w", a, err)
		}
	}
	return messages.AnyHost, nil
}

// hostName is the name the i-th -host is registered under.
func hostName(i int) string { return fmt.Sprintf("h%d", i) }

// fetchTimeout bounds terminal_close's fetch of a host's record: a slow
// host delays the close's answer by at most this, then the answer names
// the host's file and why the fetch failed.
const fetchTimeout = 30 * time.Second

// fetchRecording returns terminal_close's fetch of a record on a session
// host into dir, this ptymcp's own record folder: the same file name as
// on the host, mode 0600. The copy is written under a temporary name and
// appears under its own only once it verified (remote.Client's
// FetchRecording checks it against the close's hash and count), so the
// folder never holds a partial record; an existing file is never
// replaced.
func fetchRecording(c *remote.Client, dir string) func(context.Context, messages.SessionID, messages.Recording) (string, error) {
	return func(ctx context.Context, id messages.SessionID, rec messages.Recording) (path string, err error) {
		ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
		defer cancel()
		// The host names the file: only its base name is used here.
		name := filepath.Base(rec.Path)
		if name == "." || name == ".." || name == string(filepath.Separator) || strings.HasPrefix(name, ".") {
			return "", fmt.Errorf("the host's record path %q has no usable file name", rec.Path)
		}
		f, err := os.CreateTemp(dir, "."+name+".*.part") // 0600
		if err != nil {
			return "", err
		}
		defer func() {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}()
		if _, err := c.FetchRecording(ctx, messages.AnyHost, id, f); err != nil {
			return "", err
		}
		if err := f.Sync(); err != nil {
			return "", err
		}
		path = filepath.Join(dir, name)
		if err := os.Link(f.Name(), path); err != nil {
			return "", err
		}
		return path, nil
	}
}
