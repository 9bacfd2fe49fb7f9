// Command ptymcp serves ptyactor's terminal tools over MCP: persistent PTY
// bash sessions with kernel-exact readiness, real signals, owner isolation
// and verified teardown, for any MCP-capable agent.
//
// By default it speaks MCP over stdio (the client starts it); with -http
// ADDR it serves streamable HTTP on /mcp, where every request must carry
// the bearer token from -http-token-file and a browser Origin must be the
// server's own or allowed by -http-allow-origin; off loopback it needs
// TLS (-http-tls-cert, -http-tls-key). Each MCP session (the stdio
// connection, or one HTTP session) is one owner: it sees only its own
// terminals and tasks, and when it ends, its terminals are closed and their
// process trees torn down. SIGINT or SIGTERM disposes everything, then the
// server exits. Logs go to stderr only: stdout belongs to the protocol.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/cmd/internal/cli"
	"github.com/ptyactor/ptyactor/cmd/internal/terminals"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
	"github.com/rs/zerolog"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ptymcp:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	httpAddr       string
	sessionTimeout time.Duration
	tokenFile      string     // -http-token-file; "" means the default location
	allowOrigins   originList // -http-allow-origin, canonical
	tlsCert        string
	tlsKey         string
	maxConns       int // -http-max-conns
	maxConnsSource int // -http-max-conns-per-source
	maxSessions    int // -http-max-sessions
	maxTerminals   int // -max-terminals
	local          terminals.Flags
	tools          tools.Options
	hosts          hostFlags
	console        consoleFlags
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
	fs.StringVar(&c.httpAddr, "http", "", "serve streamable HTTP on ADDR (path /mcp) instead of stdio")
	fs.DurationVar(&c.sessionTimeout, "http-session-timeout", 30*time.Minute, "with -http: close (and dispose) an HTTP session idle this long; 0 never")
	fs.StringVar(&c.tokenFile, "http-token-file", "", "with -http: file holding the bearer token every request must carry; created (mode 0600) with a random token when missing (default: "+tokenFileName+" in the user config directory)")
	fs.Var(&c.allowOrigins, "http-allow-origin", "with -http: a browser origin (scheme://host[:port]) besides the server's own that may call it, with CORS; repeatable")
	fs.StringVar(&c.tlsCert, "http-tls-cert", "", "with -http: serve HTTPS with this PEM certificate (chain); needs -http-tls-key; required off loopback")
	fs.StringVar(&c.tlsKey, "http-tls-key", "", "with -http: the PEM private key of -http-tls-cert")
	fs.IntVar(&c.maxConns, "http-max-conns", defaultMaxConns, "with -http: at most this many connections open at once; at the cap a new one closes the oldest that has not shown the token, idle ones first (or is closed itself when all have)")
	fs.IntVar(&c.maxConnsSource, "http-max-conns-per-source", defaultMaxConnsPerSource, "with -http: at most this many idle connections without the token from one source address (an IPv6 /64); its oldest is closed for its next")
	fs.IntVar(&c.maxSessions, "http-max-sessions", defaultMaxHTTPSessions, "with -http: at most this many MCP sessions at once; an initialize beyond is refused (HTTP 503) until one ends or expires")
	fs.IntVar(&c.maxTerminals, "max-terminals", defaultMaxTerminals, "at most this many terminals per MCP session (connection); a terminal_open beyond is refused until one is closed")
	c.console.register(fs)
	c.local.Register(fs)
	fs.IntVar(&c.tools.MaxResultBytes, "max-result-bytes", tools.DefaultMaxResultBytes, "bound of every tool result's text (at least 64)")
	noBG := fs.Bool("no-background", false, "disable runInBackground and the task tools")
	fs.BoolVar(&c.tools.RefuseSecretInput, "refuse-secret-input", false, "refuse terminal_send text while the terminal waits at a secret prompt (a password read with echo off)")
	fs.Var(&c.hosts.addrs, "host", "open terminals on this ptyhost (host:port) instead of this machine; repeatable (the least busy is chosen)")
	fs.StringVar(&c.hosts.cert, "host-tls-cert", "", "with -host: this client's PEM certificate for mutual TLS")
	fs.StringVar(&c.hosts.key, "host-tls-key", "", "with -host: the PEM private key of -host-tls-cert")
	fs.StringVar(&c.hosts.ca, "host-tls-ca", "", "with -host: the CA that signed the hosts' certificates")
	fs.BoolVar(&c.hosts.insecure, "host-insecure", false, "with -host: no TLS (loopback hosts only; development)")
	fs.StringVar(&c.hosts.listen, "host-listen", "", "with -host: the address hosts dial back (default 127.0.0.1:0)")
	fs.StringVar(&c.hosts.resumeFile, "resume-file", "", "with -host, over stdio: keep the terminals when the connection ends (for the hosts' -client-grace) and resume them in the next ptymcp started with this file (mode 0600, holds the resume tokens)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *version {
		return c, cli.ErrVersion
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.tools.DisableRunInBackground = *noBG
	if c.maxTerminals < 1 {
		return c, fmt.Errorf("-max-terminals %d: at least 1", c.maxTerminals)
	}
	if err := c.local.Check(); err != nil {
		return c, err
	}
	c.tools.DefaultCwd = c.local.Workspace
	if c.httpAddr != "" {
		if err := checkHTTPFlags(c); err != nil {
			return c, err
		}
	}
	if err := c.hosts.check(); err != nil {
		return c, err
	}
	if err := c.console.check(c.httpAddr != ""); err != nil {
		return c, err
	}
	if c.console.addr != "off" {
		// The console URL file holds its login token.
		if d := consoleDir(); d != "" {
			c.local.Hide = append(c.local.Hide, d)
		}
	}
	c.local.HideFiles = append(c.local.HideFiles, c.credentialFiles()...)
	if c.hosts.resumeFile != "" && c.httpAddr != "" {
		return c, errors.New("-resume-file keeps the stdio connection's terminals: not with -http")
	}
	return c, nil
}

// credentialFiles are the files the flags name that hold a secret (a
// private key, resume tokens), hidden from sandboxed shells; the bearer
// token's file is added once known (loadHTTPCreds), -record-key's by
// terminals.
func (c config) credentialFiles() []string {
	return []string{c.tlsKey, c.console.tlsKey, c.hosts.key, c.hosts.resumeFile}
}

// checkHTTPFlags refuses, before anything listens, an HTTP setup that
// would send the token in the clear over a network.
func checkHTTPFlags(c config) error {
	host, _, err := net.SplitHostPort(c.httpAddr)
	if err != nil {
		return fmt.Errorf("-http %q: %w", c.httpAddr, err)
	}
	if c.maxConns < 1 {
		return fmt.Errorf("-http-max-conns %d: at least 1", c.maxConns)
	}
	if c.maxConnsSource < 1 {
		return fmt.Errorf("-http-max-conns-per-source %d: at least 1", c.maxConnsSource)
	}
	if c.maxSessions < 1 {
		return fmt.Errorf("-http-max-sessions %d: at least 1", c.maxSessions)
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return errors.New("-http-tls-cert and -http-tls-key go together: give both or neither")
	}
	if c.tlsCert == "" && !loopbackHost(host) {
		return fmt.Errorf("-http %s is not a loopback address: serving off loopback needs TLS (-http-tls-cert and -http-tls-key), "+
			"or listen on 127.0.0.1 and tunnel to it", c.httpAddr)
	}
	return nil
}

func run(args []string, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if errors.Is(err, cli.ErrVersion) {
		fmt.Println(cli.Version("ptymcp"))
		return nil
	}
	if err != nil {
		return err
	}
	log := c.local.Logger(stderr, "ptymcp")
	c.tools.Log = log
	var hc *httpCreds
	if c.httpAddr != "" {
		// Before any shell can start: a token or TLS problem ends here.
		if hc, err = loadHTTPCreds(c, log); err != nil {
			return err
		}
		// The token is also the console's operator login.
		c.local.HideFiles = append(c.local.HideFiles, hc.file)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Signals get their default action back as soon as the first one
	// starts the shutdown: a second one ends the process at once, whatever
	// the shutdown waits for.
	context.AfterFunc(ctx, func() {
		stop()
		if cause := context.Cause(ctx); cause != context.Canceled { // a signal's cause "is" Canceled too
			log.Info().Str("cause", cause.Error()).Msg("stopping: a second signal ends the process at once")
		}
	})
	svc, shutdown, err := c.local.Start(ctx, log)
	if err != nil {
		return err
	}
	defer shutdown()
	if c.tools.DefaultHost, err = c.hosts.register(ctx, svc); err != nil {
		return err
	}
	if c.tools.DefaultHost != "" && c.local.RecordDir != "off" {
		// Terminals on hosts, records here: a close fetches the host's.
		c.tools.FetchRecording = fetchRecording(remote.Get(svc), c.local.RecordDir)
	}
	links := view.NewLinks(nil)
	// Secret links: a person types a secret a terminal waits for on the
	// console's page, never through the model.
	secrets := view.NewSecrets(nil)
	var cons *console
	var ln net.Listener
	// The console's base URL, where secret links lead (none: no console).
	var secretBase string
	switch {
	case c.httpAddr != "":
		// Listening before the tools exist: share links name the address.
		if ln, err = listenHTTP(c, hc, log); err != nil {
			return err
		}
		defer ln.Close()
		if c.console.addr != "off" {
			c.tools.Sharing = sharing(links, httpBase(ln, hc))
			secretBase = httpBase(ln, hc)
		}
	case c.console.addr != "off":
		if cons, err = startConsole(c.console, svc, links, secrets, stderr, log); err != nil {
			return err
		}
		defer cons.close()
		c.tools.Sharing = sharing(links, cons.base)
		secretBase = cons.base
	}
	// With a console, results at a secret prompt carry a link for the
	// person (it needs the console login), and clients that elicit by URL
	// get a standalone one for their user (elicit.go); the book notes
	// each result's prompt for the latter.
	prompts := &promptBook{}
	if secretBase != "" {
		c.tools.SecretLink = prompts.wrap(secretLink(secrets, secretBase))
	}
	ts, err := tools.New(svc, c.tools)
	if err != nil {
		return err
	}
	s := newServer(svc, ts, log)
	if secretBase != "" {
		s.secrets, s.prompts = consoleSecrets{secrets: secrets, base: secretBase}, prompts
	}
	s.maxTerminals = c.maxTerminals
	defer s.close()
	if c.hosts.resumeFile != "" {
		o, err := c.hosts.resumeOwner(ctx, svc, log)
		if err != nil {
			return err
		}
		s.keep(o)
	}
	log.Info().Str("sandbox", c.local.Sandbox).Str("workspace", c.local.Workspace).Bool("allow_network", c.local.AllowNetwork).Msg("ptymcp starting")

	if c.httpAddr == "" {
		return serveStdio(ctx, s, &stdioTransport{in: os.Stdin, out: os.Stdout, log: log}, log)
	}
	var console http.Handler
	if c.console.addr != "off" {
		v, err := viewServer(c.console, svc, hc.token, links, secrets, c.allowOrigins, log)
		if err != nil {
			return err
		}
		console = v
	}
	return serveHTTP(ctx, c, hc, s, ln, console, log)
}

// httpCreds is what the HTTP server proves itself and its callers with.
type httpCreds struct {
	token string
	file  string      // the token's file
	tls   *tls.Config // nil: plain HTTP (loopback only)
}

func loadHTTPCreds(c config, log zerolog.Logger) (*httpCreds, error) {
	path, mkdir := c.tokenFile, false
	if path == "" {
		p, err := defaultTokenPath()
		if err != nil {
			return nil, err
		}
		path, mkdir = p, true
	}
	token, created, err := loadToken(path, mkdir)
	if err != nil {
		return nil, err
	}
	// The path only: the token is never logged.
	log.Info().Str("token_file", path).Bool("created", created).Msg("HTTP requests need the bearer token in this file")
	hc := &httpCreds{token: token, file: path}
	if c.tlsCert != "" {
		if hc.tls, err = terminals.LoadTLS("-http-tls", c.tlsCert, c.tlsKey, ""); err != nil {
			return nil, err
		}
	}
	return hc, nil
}

// listenHTTP binds -http; a name given as loopback (localhost) must have
// bound loopback too.
func listenHTTP(c config, hc *httpCreds, log zerolog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		return nil, err
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); hc.tls == nil && (!ok || !ta.IP.IsLoopback()) {
		_ = ln.Close()
		return nil, fmt.Errorf("-http %s bound %s, which is not loopback: serving off loopback needs TLS (-http-tls-cert and -http-tls-key)", c.httpAddr, ln.Addr())
	}
	return newConnLimit(ln, c.maxConns, c.maxConnsSource, log), nil
}

// httpBase is the -http listener's scheme://host:port.
func httpBase(ln net.Listener, hc *httpCreds) string {
	if hc.tls != nil {
		return "https://" + ln.Addr().String()
	}
	return "http://" + ln.Addr().String()
}

// serveHTTP serves MCP on /mcp, and the console (when not nil) on the
// rest of the listener.
func serveHTTP(ctx context.Context, c config, hc *httpCreds, s *server, ln net.Listener, console http.Handler, log zerolog.Logger) error {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: c.sessionTimeout})
	mux := http.NewServeMux()
	// The guard sits before the SDK handler, which keeps its own Host
	// check (DNS rebinding) and body limit.
	capped := &sessionCap{next: sdk, max: c.maxSessions, live: s.liveSessions, log: log}
	mux.Handle("/mcp", newGuard(capped, hc.token, ln.Addr(), hc.tls != nil, c.allowOrigins, log))
	if console != nil {
		mux.Handle("/", console)
		log.Info().Str("console", httpBase(ln, hc)+"/").Msg("console on the HTTP listener: log in with the bearer token")
	}
	scheme := "http"
	if hc.tls != nil {
		scheme = "https"
	}
	// Tests and wrappers read the bound address (or the URL) from this line.
	log.Info().Str("addr", ln.Addr().String()).Str("url", scheme+"://"+ln.Addr().String()+"/mcp").Msg("serving streamable HTTP on /mcp")
	// No ReadTimeout or WriteTimeout: they would cut the event stream and
	// long sends. The bounds on callers without the token: httplimits.go.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: httpHeaderTimeout, IdleTimeout: httpIdleTimeout, TLSConfig: hc.tls}
	if cl, ok := ln.(*connLimit); ok { // which connections may be closed to make room
		hs.Handler, hs.ConnContext = cl.track(mux), cl.connContext
	}
	errc := make(chan error, 1)
	go func() {
		if hc.tls != nil {
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Close the MCP sessions first (their owners are disposed), then the
	// listener and any stream still open.
	s.close()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-errc
	return nil
}
