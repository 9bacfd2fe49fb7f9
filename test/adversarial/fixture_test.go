package adversarial

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
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

	stderr *lockedBuf
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
		done: make(chan struct{}), stderr: &lockedBuf{},
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
		cert, key, pool := selfSigned(t, root)
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

// DialOptions say what a WebSocket upgrade carries.
type DialOptions struct {
	// Origin is sent as Origin; "" sends the server's own, NoOrigin none.
	Origin   string
	NoOrigin bool
	// Cookie is sent when not nil.
	Cookie *http.Cookie
	// Host overrides the Host header.
	Host string
}

// Dial opens a WebSocket to path (e.g. /api/watch/<id>). The error is
// the upgrade's (the *http.Response tells a refusal's status).
func (s *Server) Dial(ctx context.Context, path string, o DialOptions) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	switch {
	case o.NoOrigin:
	case o.Origin != "":
		h.Set("Origin", o.Origin)
	default:
		h.Set("Origin", s.Origin())
	}
	if o.Cookie != nil {
		h.Set("Cookie", CookieHeader(o.Cookie))
	}
	u := "ws" + strings.TrimPrefix(s.URL(path), "http")
	c, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: s.tr}, HTTPHeader: h, Host: o.Host})
	if res != nil && res.Body != nil {
		_ = res.Body.Close()
	}
	if c != nil {
		// Output frames can be large (a picture of a full screen).
		c.SetReadLimit(64 << 20)
	}
	return c, res, err
}

// Viewer is an open live view socket past its hello.
type Viewer struct {
	C     *websocket.Conn
	Hello map[string]any
}

// Watch opens session id's live view as a page does: the upgrade with
// o, then the hello with the share token (""  for an operator's page),
// and returns once the server answered its hello; the socket is closed
// at the test's end.
func (s *Server) Watch(ctx context.Context, id, token string, o DialOptions) (*Viewer, error) {
	c, _, err := s.Dial(ctx, "/api/watch/"+id, o)
	if err != nil {
		return nil, err
	}
	s.t.Cleanup(func() { _ = c.CloseNow() })
	if err := WriteJSON(ctx, c, map[string]any{"t": "hello", "since": 0, "token": token}); err != nil {
		return nil, err
	}
	for {
		m, _, err := ReadMessage(ctx, c)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue // output before the hello cannot come, but skip binary
		}
		switch m["t"] {
		case "hello":
			return &Viewer{C: c, Hello: m}, nil
		case "error":
			return nil, fmt.Errorf("watch refused: %v", m)
		}
	}
}

// WriteJSON writes m as one text message.
func WriteJSON(ctx context.Context, c *websocket.Conn, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageText, b)
}

// ReadMessage reads one message: a text one decoded (m), a binary one as
// its bytes (out; the live view's output, after its 8-byte number).
func ReadMessage(ctx context.Context, c *websocket.Conn) (m map[string]any, out []byte, err error) {
	typ, b, err := c.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	if typ == websocket.MessageBinary {
		if len(b) < 8 {
			return nil, nil, fmt.Errorf("binary message of %d bytes", len(b))
		}
		return nil, b[8:], nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("text message %q: %w", b, err)
	}
	return m, nil, nil
}

// CloseOf is the close status and reason err carries (-1 when err is not
// a close from the peer).
func CloseOf(err error) (websocket.StatusCode, string) {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code, ce.Reason
	}
	return -1, ""
}

// Drain reads v's messages until its socket ends, collecting the output
// (binary messages and pictures' data) into a buffer the returned func
// reads; done is closed with the socket's error when it ends.
func (v *Viewer) Drain(ctx context.Context) (text func() string, done <-chan error) {
	var mu sync.Mutex
	var buf bytes.Buffer
	d := make(chan error, 1)
	go func() {
		for {
			m, out, err := ReadMessage(ctx, v.C)
			if err != nil {
				d <- err
				return
			}
			mu.Lock()
			buf.Write(out)
			if m != nil && m["t"] == "picture" {
				s, _ := m["data"].(string)
				buf.WriteString(s)
			}
			mu.Unlock()
		}
	}()
	return func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }, d
}

// MCP is one MCP client of the server (a new MCP session, so a new
// owner) over streamable HTTP with the bearer token.
type MCP struct {
	t  testing.TB
	CS *mcp.ClientSession
}

// MCP connects a new client; it is closed at the test's end.
func (s *Server) MCP() *MCP {
	s.t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "adversarial", Version: "0"}, nil).Connect(testkit.Ctx(s.t),
		&mcp.StreamableClientTransport{Endpoint: s.URL("/mcp"), MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{s.Token, s.tr}}}, nil)
	if err != nil {
		s.t.Fatalf("MCP connect: %v", err)
	}
	s.t.Cleanup(func() { _ = cs.Close() })
	return &MCP{t: s.t, CS: cs}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Result is a tool result decoded for assertions.
type Result struct {
	Text    string
	IsError bool
	S       map[string]any // structuredContent
}

// Str is the structured result's string field k.
func (r Result) Str(k string) string { v, _ := r.S[k].(string); return v }

// CallErr runs a tool within a minute; a protocol error is returned.
func (c *MCP) CallErr(name string, args any) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CS.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return Result{}, err
	}
	r := Result{IsError: res.IsError}
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			r.Text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &r.S)
	}
	return r, nil
}

// OK runs a tool that must succeed.
func (c *MCP) OK(name string, args any) Result {
	c.t.Helper()
	r, err := c.CallErr(name, args)
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if r.IsError {
		c.t.Fatalf("%s %v: %s", name, args, r.Text)
	}
	return r
}

// Fails runs a tool that must fail with an error containing want.
func (c *MCP) Fails(name string, args any, want string) Result {
	c.t.Helper()
	r, err := c.CallErr(name, args)
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if !r.IsError || !strings.Contains(r.Text, want) {
		c.t.Fatalf("%s %v: want an error containing %q, got isError=%v %q", name, args, want, r.IsError, r.Text)
	}
	return r
}

// Open opens a terminal and returns its id.
func (c *MCP) Open() string {
	c.t.Helper()
	id := c.OK(tools.TerminalOpen, nil).Str("sessionId")
	if !strings.HasPrefix(id, "pty-") {
		c.t.Fatalf("terminal_open: no session id")
	}
	return id
}

// Send runs text in session id (with Enter) and returns the result.
func (c *MCP) Send(id, text string) Result {
	c.t.Helper()
	return c.OK(tools.TerminalSend, map[string]any{"sessionId": id, "text": text})
}

// Share makes a share link to id and returns its token (the URL's
// fragment) and URL.
func (c *MCP) Share(id string, args map[string]any) (token, url string) {
	c.t.Helper()
	a := map[string]any{"sessionId": id}
	for k, v := range args {
		a[k] = v
	}
	url = c.OK(tools.TerminalShare, a).Str("url")
	_, token, ok := strings.Cut(url, "#token=")
	if !ok {
		c.t.Fatalf("share link without a token: %q", url)
	}
	return token, url
}

// Proc is the server's figures from /proc.
type Proc struct {
	RSSKiB int
	// HWMKiB is the peak RSS since the server started (VmHWM): its
	// growth over an attack bounds what the attack cost.
	HWMKiB  int
	Threads int
	FDs     int
	// CPU is the server's user and system time so far.
	CPU time.Duration
}

// Proc reads the server's figures from /proc/PID.
func (s *Server) Proc() Proc {
	s.t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/status")
	if err != nil {
		s.t.Fatalf("server status: %v", err)
	}
	var p Proc
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.Atoi(f[0])
		switch k {
		case "VmRSS":
			p.RSSKiB = n
		case "VmHWM":
			p.HWMKiB = n
		case "Threads":
			p.Threads = n
		}
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(s.PID) + "/fd")
	if err != nil {
		s.t.Fatalf("server fds: %v", err)
	}
	p.FDs = len(fds)
	p.CPU = cpuTime(s.PID)
	return p
}

// cpuTime is process pid's user and system time (/proc/PID/stat, in
// clock ticks of 10 ms: USER_HZ is 100 on Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}

// ctx is a context for one case's steps, ended at the test's end.
func ctx(t testing.TB) context.Context { return testkit.Ctx(t) }

// waitFor waits on cond with a deadline (testkit.WaitFor).
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, d, what, cond)
}

// selfSigned writes a certificate for 127.0.0.1, ::1 and localhost and
// its key into dir, and returns their files and a pool trusting it.
func selfSigned(t testing.TB, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ptymcp adversarial"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// lockedBuf collects the server's stderr.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
