package mcpserver

// Streamable HTTP on /mcp (-http): the credentials it proves itself and
// its callers with, its listener, and the server over them, with the
// console on the rest of the listener.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/internal/tlsfiles"
	"github.com/rs/zerolog"
)

// httpCreds is what the HTTP server proves itself and its callers with.
type httpCreds struct {
	token string
	file  string      // the token's file
	tls   *tls.Config // nil: plain HTTP (loopback only)
}

// loadHTTPCreds reads (or makes) the bearer token and loads the TLS
// certificate.
func loadHTTPCreds(c HTTPConfig, log zerolog.Logger) (*httpCreds, error) {
	path, mkdir := c.TokenFile, false
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
	if c.TLSCert != "" {
		if hc.tls, err = tlsfiles.Load("-http-tls", c.TLSCert, c.TLSKey, ""); err != nil {
			return nil, err
		}
	}
	return hc, nil
}

// listenHTTP binds -http; a name given as loopback (localhost) must have
// bound loopback too.
func listenHTTP(c HTTPConfig, hc *httpCreds, log zerolog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); hc.tls == nil && (!ok || !ta.IP.IsLoopback()) {
		_ = ln.Close()
		return nil, fmt.Errorf("-http %s bound %s, which is not loopback: serving off loopback needs TLS (-http-tls-cert and -http-tls-key)", c.Addr, ln.Addr())
	}
	return newConnLimit(ln, c.MaxConns, c.MaxConnsPerSource, log), nil
}

// httpBase is the -http listener's scheme://host:port.
func httpBase(ln net.Listener, hc *httpCreds) string {
	if hc.tls != nil {
		return "https://" + ln.Addr().String()
	}
	return "http://" + ln.Addr().String()
}

// serveHTTP serves MCP on /mcp, and the console (unless it is off) on
// the rest of the listener, until ctx ends.
func (s *Server) serveHTTP(ctx context.Context, svc *actors.Service, b *binding, f *front) error {
	hs, err := s.httpServer(svc, b, f)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		if s.hc.tls != nil {
			errc <- hs.ServeTLS(f.ln, "", "")
			return
		}
		errc <- hs.Serve(f.ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Close the MCP sessions first (their owners are disposed), then the
	// listener and any stream still open.
	b.close()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-errc
	return nil
}

// httpServer is the HTTP server of /mcp and the console.
func (s *Server) httpServer(svc *actors.Service, b *binding, f *front) (*http.Server, error) {
	c, hc, ln, log := s.cfg.HTTP, s.hc, f.ln, s.cfg.Log
	var console http.Handler
	if s.cfg.Console.Addr != "off" {
		v, err := viewServer(s.cfg.Console, svc, hc.token, f.links, f.secrets, c.AllowOrigins, log)
		if err != nil {
			return nil, err
		}
		console = v
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: c.SessionTimeout})
	mux := http.NewServeMux()
	// The guard sits before the SDK handler, which keeps its own Host
	// check (DNS rebinding) and body limit.
	capped := &sessionCap{next: sdk, max: c.MaxSessions, live: b.liveSessions, log: log}
	mux.Handle("/mcp", newGuard(capped, hc.token, ln.Addr(), hc.tls != nil, c.AllowOrigins, log))
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
	return hs, nil
}
