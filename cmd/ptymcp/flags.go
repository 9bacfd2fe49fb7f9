package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/ptyactor/ptyactor/cmd/internal/cli"
	"github.com/ptyactor/ptyactor/cmd/internal/terminals"
	"github.com/ptyactor/ptyactor/mcpserver"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
)

// config is the parsed command line: the server's settings, and its
// terminals'.
type config struct {
	server mcpserver.Config
	local  terminals.Flags
}

// summary and examples open -help.
const summary = `ptymcp serves persistent terminals to AI agents over MCP: bash sessions
on real PTYs whose sends return when the program waits for input (proven
by the kernel on Linux), with real signals, isolation between clients and
verified teardown. It speaks MCP over stdio (an MCP client starts it), or
streamable HTTP with -http; people watch the terminals in the console
whose URL it prints on stderr. Logs go to stderr: JSON lines, or text
when stderr is a terminal (-log-format).`

var examples = []string{
	`ptymcp -workspace ~/project                   # over stdio: what an MCP client runs`,
	`claude mcp add terminals -- ptymcp -workspace "$PWD"`,
	`ptymcp -http 127.0.0.1:8765 -workspace ~/project   # streamable HTTP on /mcp, bearer token`,
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("ptymcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "ptymcp [flags]", summary, examples...)
	version := cli.VersionFlag(fs)
	noBG := register(fs, &c)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *version {
		return c, cli.ErrVersion
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	s := &c.server
	s.Tools.DisableRunInBackground = *noBG
	if err := c.local.Check(); err != nil {
		return c, err
	}
	s.Tools.DefaultCwd = c.local.Workspace
	s.RecordDir = c.local.RecordDir
	s.Confinement = mcpserver.Confinement{Sandbox: c.local.Sandbox, Workspace: c.local.Workspace, AllowNetwork: c.local.AllowNetwork}
	if s.Console.Addr != "off" {
		// The console URL files hold its login token.
		if d := terminals.StateDir(); d != "" {
			s.Console.Dir = filepath.Join(d, "console")
			c.local.Hide = append(c.local.Hide, s.Console.Dir)
		}
	}
	c.local.HideFiles = append(c.local.HideFiles, s.CredentialFiles()...)
	return c, s.Check()
}

// register defines every flag of ptymcp but -version on fs (the terminal
// flags by terminals.Flags), and returns -no-background's.
func register(fs *flag.FlagSet, c *config) (noBG *bool) {
	s := &c.server
	h, con, hs := &s.HTTP, &s.Console, &s.Hosts
	fs.StringVar(&h.Addr, "http", "", "serve streamable HTTP on ADDR (path /mcp) instead of stdio")
	fs.DurationVar(&h.SessionTimeout, "http-session-timeout", 30*time.Minute, "with -http: close (and dispose) an HTTP session idle this long; 0 never")
	fs.StringVar(&h.TokenFile, "http-token-file", "", "with -http: file holding the bearer token every request must carry; created (mode 0600) with a random token when missing (default: "+mcpserver.TokenFileName+" in the user config directory)")
	fs.Var(&h.AllowOrigins, "http-allow-origin", "with -http: a browser origin (scheme://host[:port]) besides the server's own that may call it, with CORS; repeatable")
	fs.StringVar(&h.TLSCert, "http-tls-cert", "", "with -http: serve HTTPS with this PEM certificate (chain); needs -http-tls-key; required off loopback")
	fs.StringVar(&h.TLSKey, "http-tls-key", "", "with -http: the PEM private key of -http-tls-cert")
	fs.IntVar(&h.MaxConns, "http-max-conns", mcpserver.DefaultMaxConns, "with -http: at most this many connections open at once; at the cap a new one closes the oldest that has not shown the token, idle ones first (or is closed itself when all have)")
	fs.IntVar(&h.MaxConnsPerSource, "http-max-conns-per-source", mcpserver.DefaultMaxConnsPerSource, "with -http: at most this many idle connections without the token from one source address (an IPv6 /64); its oldest is closed for its next")
	fs.IntVar(&h.MaxSessions, "http-max-sessions", mcpserver.DefaultMaxHTTPSessions, "with -http: at most this many MCP sessions at once; an initialize beyond is refused (HTTP 503) until one ends or expires")
	fs.IntVar(&s.MaxTerminals, "max-terminals", mcpserver.DefaultMaxTerminals, "at most this many terminals per MCP session (connection); a terminal_open beyond is refused until one is closed")
	fs.StringVar(&con.Addr, "console", "", "serve the console (people watch the terminals in a browser) on ADDR, or off; default: a loopback port of its own over stdio, the -http listener over HTTP")
	fs.StringVar(&con.TLSCert, "console-tls-cert", "", "over stdio: serve the console over HTTPS with this PEM certificate (chain); required off loopback")
	fs.StringVar(&con.TLSKey, "console-tls-key", "", "the PEM private key of -console-tls-cert")
	fs.DurationVar(&con.LoginTTL, "console-login-ttl", view.DefaultLoginTTL, "how long an operator's console login lasts (its cookie), on the server too; logout ends it sooner (1s to 168h)")
	fs.DurationVar(&con.ControlIdle, "control-idle-timeout", messages.DefaultControlIdle, "a person who took a terminal over in the console hands it back to the agent by themselves after this long without their input (1s to 24h)")
	c.local.Register(fs)
	fs.IntVar(&s.Tools.MaxResultBytes, "max-result-bytes", tools.DefaultMaxResultBytes, "bound of every tool result's text (at least 64)")
	noBG = fs.Bool("no-background", false, "disable runInBackground and the task tools")
	fs.BoolVar(&s.Tools.RefuseSecretInput, "refuse-secret-input", false, "refuse terminal_send text while the terminal waits at a secret prompt (a password read with echo off)")
	fs.Var(&hs.Addrs, "host", "open terminals on this ptyhost (host:port) instead of this machine; repeatable (the least busy is chosen)")
	fs.StringVar(&hs.Cert, "host-tls-cert", "", "with -host: this client's PEM certificate for mutual TLS")
	fs.StringVar(&hs.Key, "host-tls-key", "", "with -host: the PEM private key of -host-tls-cert")
	fs.StringVar(&hs.CA, "host-tls-ca", "", "with -host: the CA that signed the hosts' certificates")
	fs.BoolVar(&hs.Insecure, "host-insecure", false, "with -host: no TLS (loopback hosts only; development)")
	fs.StringVar(&hs.Listen, "host-listen", "", "with -host: the address hosts dial back (default 127.0.0.1:0)")
	fs.StringVar(&hs.ResumeFile, "resume-file", "", "with -host, over stdio: keep the terminals when the connection ends (for the hosts' -client-grace) and resume them in the next ptymcp started with this file (mode 0600, holds the resume tokens)")
	return noBG
}
