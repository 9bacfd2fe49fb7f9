package mcpserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// Config is what a Server serves and how. Its errors name ptymcp's
// flags, which set each field (cmd/ptymcp/flags.go).
type Config struct {
	// Log is the server's log. Over stdio nothing but the protocol may
	// reach stdout, so it belongs on stderr.
	Log zerolog.Logger
	// Stdin and Stdout carry MCP over stdio (default os.Stdin and
	// os.Stdout).
	Stdin  io.ReadCloser
	Stdout io.Writer
	// Stderr is where the stdio console prints its URL, with its login
	// token, once (default os.Stderr): never through Log, which may be
	// kept.
	Stderr io.Writer
	// Tools are the tools' options. Serve adds the log, the hosts'
	// placement, the record fetch, and the share and secret links over
	// the console.
	Tools tools.Options
	// MaxTerminals caps each MCP session's terminals (-max-terminals, at
	// least 1; DefaultMaxTerminals).
	MaxTerminals int
	// RecordDir is this machine's record folder ("off": no records).
	// With Hosts, terminal_close fetches a host's record into it.
	RecordDir string
	// Confinement is what the terminals are confined to, for the start's
	// log line.
	Confinement Confinement
	// HTTP, when its Addr is set, serves streamable HTTP instead of stdio.
	HTTP HTTPConfig
	// Console is where people watch the terminals in a browser.
	Console ConsoleConfig
	// Hosts, when it names any, are the session hosts the terminals open
	// on instead of this machine.
	Hosts HostsConfig
}

// Confinement names the terminals' sandbox (-sandbox, -workspace,
// -allow-network).
type Confinement struct {
	Sandbox      string
	Workspace    string
	AllowNetwork bool
}

// HTTPConfig is -http's: streamable HTTP on /mcp, behind the bearer
// token and the Origin checks (httpauth.go), within the bounds on callers
// without the token (httplimits.go).
type HTTPConfig struct {
	// Addr is the address to listen on (-http); "" serves stdio.
	Addr string
	// SessionTimeout closes (and disposes) an MCP session idle this long
	// (-http-session-timeout); 0 never.
	SessionTimeout time.Duration
	// TokenFile holds the bearer token (-http-token-file); "" means
	// TokenFileName in the user config directory, created when missing.
	TokenFile string
	// AllowOrigins are the browser origins besides the server's own that
	// may call it, with CORS (-http-allow-origin), canonical.
	AllowOrigins OriginList
	// TLSCert and TLSKey are the PEM files of HTTPS (-http-tls-cert,
	// -http-tls-key): both or neither, and required off loopback.
	TLSCert string
	TLSKey  string
	// MaxConns bounds the open connections (-http-max-conns;
	// DefaultMaxConns); MaxConnsPerSource the idle ones without the
	// token from one source (-http-max-conns-per-source;
	// DefaultMaxConnsPerSource).
	MaxConns          int
	MaxConnsPerSource int
	// MaxSessions bounds the MCP sessions at once (-http-max-sessions;
	// DefaultMaxHTTPSessions).
	MaxSessions int
}

// Check refuses, before anything listens or any shell starts, a
// configuration that is inconsistent or would send a token in the clear
// over a network.
func (c Config) Check() error {
	if c.MaxTerminals < 1 {
		return fmt.Errorf("-max-terminals %d: at least 1", c.MaxTerminals)
	}
	if c.HTTP.Addr != "" {
		if err := c.HTTP.check(); err != nil {
			return err
		}
	}
	if err := c.Hosts.check(); err != nil {
		return err
	}
	if err := c.Console.check(c.HTTP.Addr != ""); err != nil {
		return err
	}
	if c.Hosts.ResumeFile != "" && c.HTTP.Addr != "" {
		return errors.New("-resume-file keeps the stdio connection's terminals: not with -http")
	}
	return nil
}

// CredentialFiles are the files the configuration names that hold a
// secret (private keys, resume tokens), for the sandbox to hide; the
// bearer token's file is known once loaded (Server.TokenFile).
func (c Config) CredentialFiles() []string {
	return []string{c.HTTP.TLSKey, c.Console.TLSKey, c.Hosts.Key, c.Hosts.ResumeFile}
}

// check refuses an HTTP setup that would send the token in the clear over
// a network, or bounds below 1.
func (h HTTPConfig) check() error {
	host, _, err := net.SplitHostPort(h.Addr)
	if err != nil {
		return fmt.Errorf("-http %q: %w", h.Addr, err)
	}
	if h.MaxConns < 1 {
		return fmt.Errorf("-http-max-conns %d: at least 1", h.MaxConns)
	}
	if h.MaxConnsPerSource < 1 {
		return fmt.Errorf("-http-max-conns-per-source %d: at least 1", h.MaxConnsPerSource)
	}
	if h.MaxSessions < 1 {
		return fmt.Errorf("-http-max-sessions %d: at least 1", h.MaxSessions)
	}
	if (h.TLSCert == "") != (h.TLSKey == "") {
		return errors.New("-http-tls-cert and -http-tls-key go together: give both or neither")
	}
	if h.TLSCert == "" && !loopbackHost(host) {
		return fmt.Errorf("-http %s is not a loopback address: serving off loopback needs TLS (-http-tls-cert and -http-tls-key), "+
			"or listen on 127.0.0.1 and tunnel to it", h.Addr)
	}
	return nil
}
