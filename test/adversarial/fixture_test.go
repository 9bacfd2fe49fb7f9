package adversarial

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// The fixture: a real ptymcp binary serving streamable HTTP on a loopback
// port with its console on the same listener, in a home of its own (HOME
// and the XDG folders in a temporary directory, so no test touches the
// real ones and every start is a newcomer's), its bearer token in a file
// of the test's, and the helpers an attacker (or the token holder) uses:
// plain HTTP requests, the console's login, the MCP client, the live
// view's WebSocket, and the server's /proc figures.

// fastFlags: readiness timings for tests (cmd/ptymcp's tests use the
// same); a later flag of Options.Args wins (Go's flag package keeps the
// last value).
var fastFlags = []string{"-sandbox", "danger-full-access", "-idle-silence-ms", "30000", "-timeout-ms", "60000", "-dispose-grace-ms", "500", "-poll-interval-ms", "10", "-log-level", "debug"}

// startTimeout bounds a server's start; stopTimeout its exit on SIGTERM.
const (
	startTimeout = 30 * time.Second
	stopTimeout  = 20 * time.Second
)

var bins struct {
	dirOnce sync.Once
	dir     string
	dirErr  error
	builds  sync.Map // command name → *build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// ptymcpBin is cmd/ptymcp built once per test binary (without -race:
// the server's speed matters to the load cases, and cmd/ptymcp's own
// tests run it under the race detector).
func ptymcpBin(t testing.TB) string { return command(t, "ptymcp") }

// ptyrecBin is cmd/ptyrec, built once per test binary.
func ptyrecBin(t testing.TB) string { return command(t, "ptyrec") }

// command builds cmd/<name> once per test binary, into a folder
// TestMain removes.
func command(t testing.TB, name string) string {
	t.Helper()
	bins.dirOnce.Do(func() { bins.dir, bins.dirErr = os.MkdirTemp("", "ptyactor-adversarial-") })
	if bins.dirErr != nil {
		t.Fatal(bins.dirErr)
	}
	v, _ := bins.builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() {
		b.path = filepath.Join(bins.dir, name)
		if out, err := exec.Command("go", "build", "-o", b.path, "github.com/ptyactor/ptyactor/cmd/"+name).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", name, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func removeBinaries() {
	if bins.dir != "" {
		_ = os.RemoveAll(bins.dir)
	}
}

// Options is how a test's server starts.
type Options struct {
	// Args come after the fixture's flags (fastFlags, -http, the token
	// file): "-sandbox", "workspace-write" overrides the fixture's
	// danger-full-access.
	Args []string
	// TLS serves HTTPS with a self-signed certificate for 127.0.0.1,
	// ::1 and localhost made for the test (Server.Pool trusts it).
	TLS bool
	// DefaultTokenFile leaves -http-token-file out: the server makes its
	// token in the user config folder (Server.ConfigHome).
	DefaultTokenFile bool
	// Env is added to the server's environment (after the fixture's
	// HOME and XDG folders, so it may override them).
	Env []string
}

// Server is a running ptymcp -http with its console.
type Server struct {
	t   testing.TB
	cmd *exec.Cmd
	// PID is the server's process id (its /proc figures: RSS, FDs,
	// Threads).
	PID int
	// Token is the bearer token (also the console's operator login).
	Token     string
	TokenFile string
	// Base is scheme://127.0.0.1:port, Addr its host:port.
	Base string
	Addr string
	// Home, ConfigHome, StateHome are the server's HOME,
	// XDG_CONFIG_HOME and XDG_STATE_HOME; Workdir its current directory
	// (the terminals' workspace).
	Home, ConfigHome, StateHome, Workdir string
	// Pool trusts the server's certificate under Options.TLS.
	Pool *x509.CertPool
	// HTTP is a client for the server (trusting Pool, never following
	// redirects); its idle connections are closed at the test's end.
	HTTP *http.Client
	tr   *http.Transport

	stderr *testkit.LockedBuffer
	done   chan struct{}
	err    error // cmd.Wait's, once done is closed
}

// Start runs ptymcp -http 127.0.0.1:0 with opts and returns once it
// serves. When the test ends it is stopped with SIGTERM (killed after
// stopTimeout, which fails the test): no server outlives its test.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	root := t.TempDir()
	s := &Server{
		t: t, Home: filepath.Join(root, "home"), Workdir: filepath.Join(root, "work"),
		done: make(chan struct{}), stderr: &testkit.LockedBuffer{},
	}
	s.ConfigHome, s.StateHome = filepath.Join(s.Home, ".config"), filepath.Join(s.Home, ".local", "state")
	for _, d := range []string{s.Home, s.Workdir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := append(slices.Clone(fastFlags), "-http", "127.0.0.1:0")
	if !opts.DefaultTokenFile {
		s.TokenFile = filepath.Join(root, "token")
		args = append(args, "-http-token-file", s.TokenFile)
	}
	s.tr = &http.Transport{}
	if opts.TLS {
		cert, key, pool := testkit.SelfSignedCert(t, root)
		s.Pool = pool
		s.tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		args = append(args, "-http-tls-cert", cert, "-http-tls-key", key)
	}
	args = append(args, opts.Args...)
	s.HTTP = &http.Client{Transport: s.tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	cmd := exec.Command(ptymcpBin(t), args...)
	cmd.Dir = s.Workdir
	cmd.Env = append(os.Environ(), "HOME="+s.Home, "XDG_CONFIG_HOME="+s.ConfigHome, "XDG_STATE_HOME="+s.StateHome,
		"XDG_CACHE_HOME="+filepath.Join(s.Home, ".cache"), "XDG_DATA_HOME="+filepath.Join(s.Home, ".local", "share"))
	cmd.Env = append(cmd.Env, opts.Env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.PID = cmd, cmd.Process.Pid
	go func() { s.err = cmd.Wait(); _ = pw.Close(); close(s.done) }()
	t.Cleanup(func() {
		s.tr.CloseIdleConnections()
		s.Stop()
		if t.Failed() {
			t.Logf("server stderr (tail):\n%s", tail(s.Stderr(), 6000))
		}
	})
	type started struct{ url, addr, tokenFile string }
	up := make(chan started, 1)
	go func() {
		var st started
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			_, _ = s.stderr.Write(append(sc.Bytes(), '\n'))
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if v, ok := m["token_file"].(string); ok {
				st.tokenFile = v
			}
			if v, ok := m["url"].(string); ok {
				st.url = v
				st.addr, _ = m["addr"].(string)
				select {
				case up <- st:
				default:
				}
			}
		}
		_, _ = io.Copy(s.stderr, pr)
	}()
	select {
	case st := <-up:
		s.Addr, s.TokenFile = st.addr, st.tokenFile
		s.Base = strings.TrimSuffix(st.url, "/mcp")
	case <-s.done:
		t.Fatalf("ptymcp exited before serving: %v\n%s", s.err, s.Stderr())
	case <-time.After(startTimeout):
		t.Fatalf("ptymcp did not serve within %v\n%s", startTimeout, s.Stderr())
	}
	b, err := os.ReadFile(s.TokenFile)
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	s.Token = strings.TrimSpace(string(b))
	return s
}

// Stop ends the server with SIGTERM (it disposes every session) and
// waits for it; one still running after stopTimeout is killed and fails
// the test. A second Stop returns at once.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if s.err != nil {
			s.t.Errorf("ptymcp exit after SIGTERM: %v", s.err)
		}
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("ptymcp still running %v after SIGTERM", stopTimeout)
	}
}

// From is the server as reached from source address ip (127.0.0.2, say:
// all of 127/8 is loopback): its HTTP client, Do, Dial, Watch and MCP
// connect from there. The source-bound cases (throttles, bounds per
// source) use it.
func (s *Server) From(ip string) *Server {
	s.t.Helper()
	c := *s
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 30 * time.Second}
	c.tr = &http.Transport{DialContext: d.DialContext}
	if s.tr.TLSClientConfig != nil {
		c.tr.TLSClientConfig = s.tr.TLSClientConfig.Clone()
	}
	c.HTTP = &http.Client{Transport: c.tr, CheckRedirect: s.HTTP.CheckRedirect}
	s.t.Cleanup(c.tr.CloseIdleConnections)
	return &c
}

// Done is closed once the server exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stderr is the server's log so far (JSON lines, and the console's one
// plain line over stdio, which -http has not).
func (s *Server) Stderr() string { return s.stderr.String() }

// URL is Base + path.
func (s *Server) URL(path string) string { return s.Base + path }

// Host is the host:port a browser sends as Host (and in its Origin).
func (s *Server) Host() string {
	return strings.TrimPrefix(strings.TrimPrefix(s.Base, "https://"), "http://")
}

// Origin is the server's own origin, as its pages' requests carry it.
func (s *Server) Origin() string { return s.Base }

// Reply is an HTTP answer, read in full (at most 1 MiB).
type Reply struct {
	Status int
	Header http.Header
	Body   string
}

// Do sends method path with body (nil: none) and hdr as name, value
// pairs; a "Host" pair sets the request's Host. It fails the test only
// on a transport error.
func (s *Server) Do(method, path string, body []byte, hdr ...string) Reply {
	s.t.Helper()
	r, err := s.DoErr(method, path, body, hdr...)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// DoErr is Do returning the transport's error.
func (s *Server) DoErr(method, path string, body []byte, hdr ...string) (Reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL(path), rd)
	if err != nil {
		return Reply{}, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := s.HTTP.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return Reply{Status: res.StatusCode, Header: res.Header, Body: string(b)}, err
}

// LoginReply posts token to /api/login with hdr (name, value pairs).
func (s *Server) LoginReply(token string, hdr ...string) Reply {
	s.t.Helper()
	b, _ := json.Marshal(map[string]string{"token": token})
	return s.Do(http.MethodPost, "/api/login", b, append([]string{"Content-Type", "application/json"}, hdr...)...)
}

// Login logs the operator in as the console page does (its own Origin,
// the token in the body) and returns the login cookie.
func (s *Server) Login() *http.Cookie {
	s.t.Helper()
	r := s.LoginReply(s.Token, "Origin", s.Origin())
	if r.Status != http.StatusNoContent {
		s.t.Fatalf("login: HTTP %d %q", r.Status, r.Body)
	}
	c := LoginCookie(r)
	if c == nil {
		s.t.Fatalf("login: no cookie in %v", r.Header)
	}
	return c
}

// LoginCookie is the console's login cookie a reply set, or nil.
func LoginCookie(r Reply) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "ptyactor_console" {
			return c
		}
	}
	return nil
}

// CookieHeader is the Cookie request header carrying c.
func CookieHeader(c *http.Cookie) string { return c.Name + "=" + c.Value }
