package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/internal/tlsfiles"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
	"github.com/ptyactor/ptyactor/view/assets"
	"github.com/rs/zerolog"
)

// The console (package view): a person watches the server's terminals in
// a browser. Over stdio it listens on a loopback port of its own (-console
// ADDR; off loopback with -console-tls-cert/-key) and logs its operator in
// with a token made at start, which never reaches the model: the console
// URL carries it in its fragment and is printed once on stderr and written
// to a 0600 file in ConsoleConfig.Dir (writeConsoleFile), since MCP
// clients often hide stderr. Over HTTP the console is on the -http
// listener, and the bearer token logs in.

// ConsoleConfig is the console's: where it listens over stdio, how long
// an operator's login and hold on a terminal last.
type ConsoleConfig struct {
	// Addr is -console: "" a loopback port of its own over stdio (the
	// -http listener over HTTP), "off" none, or ADDR (stdio only).
	Addr string
	// TLSCert and TLSKey serve the stdio console over HTTPS
	// (-console-tls-cert, -console-tls-key): both or neither, and
	// required off loopback.
	TLSCert string
	TLSKey  string
	// ControlIdle ends an operator's hold on a terminal's input after
	// this long without their input (-control-idle-timeout).
	ControlIdle time.Duration
	// LoginTTL is how long an operator's console login lasts on the
	// server (-console-login-ttl; view.Options.LoginTTL).
	LoginTTL time.Duration
	// Dir holds the console URL files (a folder the sandbox hides: each
	// holds its login token); "" writes none.
	Dir string
}

// MaxLoginTTL bounds -console-login-ttl.
const MaxLoginTTL = 7 * 24 * time.Hour

// check refuses, before anything listens, a console that would send its
// token in the clear over a network.
func (f ConsoleConfig) check(http bool) error {
	if (f.TLSCert == "") != (f.TLSKey == "") {
		return errors.New("-console-tls-cert and -console-tls-key go together: give both or neither")
	}
	if f.ControlIdle < time.Second || f.ControlIdle > messages.MaxControlIdle {
		return fmt.Errorf("-control-idle-timeout %s: between 1s and %s", f.ControlIdle, messages.MaxControlIdle)
	}
	if f.LoginTTL < time.Second || f.LoginTTL > MaxLoginTTL {
		return fmt.Errorf("-console-login-ttl %s: between 1s and %s", f.LoginTTL, MaxLoginTTL)
	}
	switch {
	case f.Addr == "" || f.Addr == "off":
		return nil
	case http:
		return errors.New("-console over HTTP: the console is served on the -http listener; give off or nothing")
	}
	host, _, err := net.SplitHostPort(f.Addr)
	if err != nil {
		return fmt.Errorf("-console %q: %w", f.Addr, err)
	}
	if f.TLSCert == "" && !loopbackHost(host) {
		return fmt.Errorf("-console %s is not a loopback address: off loopback the console needs TLS (-console-tls-cert and -console-tls-key)", f.Addr)
	}
	return nil
}

// console is a running console over stdio.
type console struct {
	base   string // scheme://host:port
	url    string // base with the operator token in the fragment
	file   string // the URL file; removed at close
	server *http.Server
	errc   chan error
}

// newToken is 256 random bits, base64url.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// viewServer is the console's handler over svc.
func viewServer(f ConsoleConfig, svc *actors.Service, token string, links *view.Links, secrets *view.Secrets, origins []string, log zerolog.Logger) (*view.Server, error) {
	return view.New(view.Options{
		Source: view.ServiceSource(svc), OperatorToken: token, Links: links, Secrets: secrets, Assets: assets.FS(),
		Origins: origins, Log: log.With().Str("component", "console").Logger(), ControlIdle: f.ControlIdle, LoginTTL: f.LoginTTL,
	})
}

// startConsole serves the console over stdio: its own listener, its
// token, its URL printed and written to a file.
func startConsole(f ConsoleConfig, svc *actors.Service, links *view.Links, secrets *view.Secrets, stderr io.Writer, log zerolog.Logger) (*console, error) {
	addr := f.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var tc *tls.Config
	if f.TLSCert != "" {
		var err error
		if tc, err = tlsfiles.Load("-console-tls", f.TLSCert, f.TLSKey, ""); err != nil {
			return nil, err
		}
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	h, err := viewServer(f, svc, token, links, secrets, nil, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-console: %w", err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); tc == nil && (!ok || !ta.IP.IsLoopback()) {
		_ = ln.Close()
		return nil, fmt.Errorf("-console %s bound %s, which is not loopback: off loopback the console needs TLS", addr, ln.Addr())
	}
	scheme := "http"
	if tc != nil {
		scheme = "https"
	}
	c := &console{base: scheme + "://" + ln.Addr().String(), errc: make(chan error, 1)}
	c.url = c.base + "/#token=" + token
	c.server = &http.Server{Handler: h, ReadHeaderTimeout: httpHeaderTimeout, IdleTimeout: httpIdleTimeout, TLSConfig: tc}
	go func() {
		if tc != nil {
			c.errc <- c.server.ServeTLS(ln, "", "")
			return
		}
		c.errc <- c.server.Serve(ln)
	}()
	if c.file, err = writeConsoleFile(f.Dir, c.url); err != nil {
		log.Warn().Err(err).Msg("console: cannot write the console URL file")
	}
	// Once, on stderr (never through the logger, which may be kept): the
	// URL with its token, for the person at this machine.
	fmt.Fprintf(stderr, "ptymcp: console (watch the terminals in a browser): %s\n", c.url)
	log.Info().Str("console", c.base).Str("url_file", c.file).Msg("console listening; its URL with the login token is in the file")
	return c, nil
}

// writeConsoleFile writes the URL to ptymcp-<pid>.url in the console
// folder (0700; a folder others can use is refused), mode 0600.
func writeConsoleFile(dir, url string) (string, error) {
	if dir == "" {
		return "", errors.New("no state folder (XDG_STATE_HOME, HOME)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("console folder %s: group or others have access", dir)
	}
	path := filepath.Join(dir, "ptymcp-"+strconv.Itoa(os.Getpid())+".url")
	if err := os.WriteFile(path+".tmp", []byte(url+"\n"), 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(path+".tmp", path)
}

// close stops the console and removes its URL file.
func (c *console) close() {
	if c == nil {
		return
	}
	if c.file != "" {
		_ = os.Remove(c.file)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.server.Shutdown(ctx); err != nil {
		_ = c.server.Close()
	}
	<-c.errc
}

// sharing is the tools' share links over the console at base.
func sharing(links *view.Links, base string) *tools.Sharing {
	return &tools.Sharing{Links: links, BaseURL: base}
}

// secretLink is the tools' maker of secret links (tools.Options.SecretLink)
// over the console at base: base/secret/<session>#token=<token>. The links
// need the operator's console login (view.Secrets.Mint, not standalone):
// the model reads them in its results, and cannot use them.
func secretLink(secrets *view.Secrets, base string) func(messages.Owner, messages.SecretPrompt) (string, error) {
	return func(o messages.Owner, p messages.SecretPrompt) (string, error) {
		token, err := secrets.Mint(o, p, false)
		if err != nil {
			return "", err
		}
		return base + "/secret/" + url.PathEscape(string(p.Session)) + "#token=" + token, nil
	}
}
