// Command ptyhost runs ptyactor terminals for remote clients: a client
// (remote.Client.RegisterHost of actors/remote, or ptymcp -host) spawns sessions here, and
// they run next to their PTYs, readiness decided here.
//
//	ptyhost -listen 10.0.0.5:7400 -tls-cert host.pem -tls-key host.key -tls-ca ca.pem
//	ptyhost -listen 127.0.0.1:7400 -insecure
//
// Off loopback it refuses to start without mutual TLS: its certificate and
// key, and the CA that signs client certificates (a client without one is
// refused in the handshake). -insecure is accepted only with a loopback
// address. Every request carries its owner's capability token, minted
// here; a client sees only its own owners' sessions. A client that stops
// heartbeating is lost (or one detaches its owner): its sessions keep
// running for -client-grace (default 5m), and a client that presents the
// owner's resume token within it gets them back; after it they are closed
// and their trees torn down. SIGINT or SIGTERM closes every session, then the
// host exits. Logs go to stderr.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote/host"
	"github.com/ptyactor/ptyactor/cmd/internal/cli"
	"github.com/ptyactor/ptyactor/cmd/internal/terminals"
	"github.com/ptyactor/ptyactor/internal/tlsfiles"
	"github.com/rs/zerolog"
)

func main() {
	if err := run(os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "ptyhost:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	listen      string
	tlsCert     string
	tlsKey      string
	tlsCA       string
	insecure    bool
	clientGrace time.Duration
	clientLoss  time.Duration
	maxSessions int
	local       terminals.Flags
}

// summary and examples open -help.
const summary = `ptyhost runs ptyactor terminals for remote clients (ptymcp -host, or
remote.Client in Go): sessions spawn here and run next to their PTYs,
readiness decided here. Off loopback it needs mutual TLS. A lost client's
sessions keep running for -client-grace, to be resumed. It prints where
it listens on stdout; logs go to stderr (JSON lines, or text when stderr
is a terminal: -log-format).`

var examples = []string{
	`ptyhost -listen 127.0.0.1:7400 -insecure -sandbox danger-full-access   # development, loopback only`,
	`ptyhost -listen 10.0.0.5:7400 -tls-cert host.pem -tls-key host.key -tls-ca ca.pem`,
	`ptymcp -host 10.0.0.5:7400 -host-tls-cert client.pem -host-tls-key client.key -host-tls-ca ca.pem   # its client`,
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("ptyhost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "ptyhost -listen ADDR [flags]", summary, examples...)
	version := cli.VersionFlag(fs)
	fs.StringVar(&c.listen, "listen", "", "serve clients on ADDR (host:port; port 0 picks one, printed on stderr)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate (chain) the host presents; required unless -insecure")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM CA certificate(s) that sign client certificates; required unless -insecure")
	fs.BoolVar(&c.insecure, "insecure", false, "serve without TLS (only with a loopback -listen address)")
	fs.DurationVar(&c.clientGrace, "client-grace", host.DefaultClientGrace, "how long a lost (or detached) client's sessions keep running, for the client to resume them, before they are closed; 0 closes them at once")
	fs.IntVar(&c.maxSessions, "max-sessions-per-client", host.DefaultMaxSessionsPerClient, "the most sessions one client may have open or starting on this host; 0: no limit")
	fs.DurationVar(&c.clientLoss, "client-loss", host.DefaultClientLoss, "heartbeat silence after which a client is lost")
	c.local.Register(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *version {
		return c, cli.ErrVersion
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.listen == "" {
		return c, errors.New("-listen ADDR is required")
	}
	if err := host.CheckListen(c.listen, c.insecure); err != nil {
		return c, fmt.Errorf("-listen: %w (serve with -tls-cert, -tls-key and -tls-ca)", err)
	}
	tlsSet := c.tlsCert != "" || c.tlsKey != "" || c.tlsCA != ""
	switch {
	case c.insecure && tlsSet:
		return c, errors.New("-insecure and -tls-* are exclusive")
	case !c.insecure && (c.tlsCert == "" || c.tlsKey == "" || c.tlsCA == ""):
		return c, errors.New("mutual TLS needs -tls-cert, -tls-key and -tls-ca (or -insecure on a loopback address)")
	}
	if c.maxSessions < 0 {
		return c, fmt.Errorf("-max-sessions-per-client %d: want 0 (no limit) or more", c.maxSessions)
	}
	if c.clientGrace < 0 || c.clientLoss <= 0 {
		return c, errors.New("-client-grace must be >= 0 and -client-loss > 0")
	}
	if err := c.local.Check(); err != nil {
		return c, err
	}
	// The host's private key: no sandboxed shell reads it.
	c.local.HideFiles = append(c.local.HideFiles, c.tlsKey)
	return c, nil
}

// run serves until a signal (or ready's caller, in tests, sends one). ready,
// when set, receives the address once the host serves.
func run(args []string, stderr io.Writer, ready func(addr string)) error {
	var c config
	var tc *tls.Config
	return terminals.Command{
		Name: "ptyhost",
		Parse: func(args []string, stderr io.Writer) (*terminals.Flags, error) {
			var err error
			c, err = parseFlags(args, stderr)
			return &c.local, err
		},
		Prepare: func(zerolog.Logger) (err error) {
			if !c.insecure {
				tc, err = tlsfiles.Load("-tls", c.tlsCert, c.tlsKey, c.tlsCA)
			}
			return err
		},
		Serve: func(ctx context.Context, svc *actors.Service, log zerolog.Logger) error {
			return serve(ctx, c, tc, svc, log, ready)
		},
	}.Run(args, stderr)
}

// serve runs the host over svc until ctx ends.
func serve(ctx context.Context, c config, tc *tls.Config, svc *actors.Service, log zerolog.Logger, ready func(addr string)) error {
	h, err := host.Start(svc, host.Config{
		Listen: c.listen, TLS: tc, Insecure: c.insecure, Log: log,
		ClientGrace: c.clientGrace, ClientLoss: c.clientLoss, MaxSessionsPerClient: c.maxSessions,
	})
	if err != nil {
		return err
	}
	defer h.Close()
	log.Info().Str("sandbox", c.local.Sandbox).Str("workspace", c.local.Workspace).Str("address", h.Addr()).Msg("ptyhost ready")
	// The one line on stdout: where clients reach this host (for scripts
	// and tests that listen on port 0).
	fmt.Printf("ptyhost listening on %s\n", h.Addr())
	if ready != nil {
		ready(h.Addr())
	}
	<-ctx.Done()
	log.Info().Msg("ptyhost stopping: closing every session; a second signal ends the process at once")
	return nil
}
