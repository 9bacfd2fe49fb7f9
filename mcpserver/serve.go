package mcpserver

import (
	"context"
	"net"
	"os"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
)

// Server is an MCP server over a service's terminals, configured and
// holding its credentials, ready to Serve.
type Server struct {
	cfg Config
	hc  *httpCreds // with HTTP: the token and TLS
}

// New checks cfg and, with HTTP, loads the bearer token (creating its
// file when missing) and the TLS certificate: a problem with either ends
// here, before any shell can start.
func New(cfg Config) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Stdin == nil {
		cfg.Stdin = os.Stdin
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	cfg.Tools.Log = cfg.Log
	s := &Server{cfg: cfg}
	if cfg.HTTP.Addr != "" {
		var err error
		if s.hc, err = loadHTTPCreds(cfg.HTTP, cfg.Log); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// TokenFile is the bearer token's file ("" over stdio). The token is also
// the console's operator login: no sandboxed shell may read it.
func (s *Server) TokenFile() string {
	if s.hc == nil {
		return ""
	}
	return s.hc.file
}

// Serve serves MCP with svc's terminals until ctx ends, or over stdio
// until the client hangs up; then it ends every MCP session (their owners
// are disposed) and closes what it listened on. The caller shuts svc
// down afterwards.
func (s *Server) Serve(ctx context.Context, svc *actors.Service) error {
	c, log := s.cfg, s.cfg.Log
	var err error
	if c.Tools.DefaultHost, err = c.Hosts.register(ctx, svc); err != nil {
		return err
	}
	if c.Tools.DefaultHost != "" && c.RecordDir != "off" {
		// Terminals on hosts, records here: a close fetches the host's.
		c.Tools.FetchRecording = fetchRecording(remote.Get(svc), c.RecordDir)
	}
	f, err := s.openFront(svc)
	if err != nil {
		return err
	}
	defer f.close()
	b, err := s.bind(svc, c.Tools, f)
	if err != nil {
		return err
	}
	defer b.close()
	if c.Hosts.ResumeFile != "" {
		o, err := c.Hosts.resumeOwner(ctx, svc, log)
		if err != nil {
			return err
		}
		b.keep(o)
	}
	log.Info().Str("sandbox", c.Confinement.Sandbox).Str("workspace", c.Confinement.Workspace).Bool("allow_network", c.Confinement.AllowNetwork).Msg("ptymcp starting")
	if c.HTTP.Addr == "" {
		return serveStdio(ctx, b, &stdioTransport{in: c.Stdin, out: c.Stdout, log: log}, log)
	}
	return s.serveHTTP(ctx, svc, b, f)
}

// front is what people and HTTP clients reach: the -http listener, or the
// stdio console, and the links that lead there.
type front struct {
	links *view.Links
	// secrets: secret links, where a person types a secret a terminal
	// waits for on the console's page, never through the model.
	secrets *view.Secrets
	ln      net.Listener // with HTTP
	cons    *console     // over stdio
	// base is the console's base URL, where share and secret links lead
	// ("": no console).
	base string
}

// openFront listens: with HTTP before the tools exist, since share links
// name the address.
func (s *Server) openFront(svc *actors.Service) (*front, error) {
	c, log := s.cfg, s.cfg.Log
	f := &front{links: view.NewLinks(nil), secrets: view.NewSecrets(nil)}
	var err error
	switch {
	case c.HTTP.Addr != "":
		if f.ln, err = listenHTTP(c.HTTP, s.hc, log); err != nil {
			return nil, err
		}
		if c.Console.Addr != "off" {
			f.base = httpBase(f.ln, s.hc)
		}
	case c.Console.Addr != "off":
		if f.cons, err = startConsole(c.Console, svc, f.links, f.secrets, c.Stderr, log); err != nil {
			return nil, err
		}
		f.base = f.cons.base
	}
	return f, nil
}

func (f *front) close() {
	f.cons.close()
	if f.ln != nil {
		_ = f.ln.Close()
	}
}

// bind makes the tools and binds them to MCP. With a console, results at
// a secret prompt carry a link for the person (it needs the console
// login), and clients that elicit by URL get a standalone one for their
// user (elicit.go); the book notes each result's prompt for the latter.
func (s *Server) bind(svc *actors.Service, opts tools.Options, f *front) (*binding, error) {
	prompts := &promptBook{}
	if f.base != "" {
		opts.Sharing = sharing(f.links, f.base)
		opts.SecretLink = prompts.wrap(secretLink(f.secrets, f.base))
	}
	ts, err := tools.New(svc, opts)
	if err != nil {
		return nil, err
	}
	b := newBinding(svc, ts, s.cfg.Log)
	if f.base != "" {
		b.secrets, b.prompts = consoleSecrets{secrets: f.secrets, base: f.base}, prompts
	}
	b.maxTerminals = s.cfg.MaxTerminals
	return b, nil
}
