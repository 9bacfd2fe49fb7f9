package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/fixture"
	"github.com/ptyactor/ptyactor/test/leakcheck"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// runVar marks every process this test binary starts, including the
// ptymcp servers it builds and runs and their shells: none may outlive
// the tests.
const runVar = "PTYMCP_TEST_RUN"

var checker *leakcheck.Checker

func TestMain(m *testing.M) {
	restore := fixture.PrivateState()
	code := leakcheck.Main(m, runVar, func(c *leakcheck.Checker) { checker = c })
	restore()
	cleanupBinary()
	fixture.RemoveBinaries()
	os.Exit(code)
}

// testConfig is testkit.PTYConfig: its silence tier (30 s) outlasts a
// python3 start on a loaded machine (5 s did not: test/stress.sh), and the
// foreground "sleep 100" sends here are still running when a test cancels
// them.
func testConfig() messages.Config { return testkit.PTYConfig() }

// inproc is a server in this process with one service, reached over the
// SDK's in-memory transport.
type inproc struct {
	t   testing.TB
	svc *actors.Service
	srv *binding
}

func newInproc(t testing.TB, opts tools.Options) *inproc {
	t.Helper()
	return newInprocWith(t, opts, local.Options{})
}

// newInprocWith is newInproc over a local backend with lopts (a sandbox).
func newInprocWith(t testing.TB, opts tools.Options, lopts local.Options) *inproc {
	t.Helper()
	svc := fixture.Service(t, fixture.Options{Config: testConfig(), Backends: []backend.Backend{local.New(lopts)}})
	ts, err := tools.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := newBinding(svc, ts, zerolog.Nop())
	t.Cleanup(s.close)
	return &inproc{t: t, svc: svc, srv: s}
}

// client connects a new MCP client (a new MCP session, so a new owner).
func (p *inproc) client() *client {
	p.t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := testkit.Ctx(p.t)
	if _, err := p.srv.mcp.Connect(ctx, st, nil); err != nil {
		p.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { _ = cs.Close() })
	return &client{t: p.t, cs: cs}
}

// client is one MCP client session.
type client struct {
	t  testing.TB
	cs *mcp.ClientSession
}

// result is a tool result decoded for assertions.
type result struct {
	Text    string
	IsError bool
	S       map[string]any // structuredContent
}

func (r result) str(k string) string {
	v, _ := r.S[k].(string)
	return v
}

func (r result) num(k string) float64 {
	v, _ := r.S[k].(float64)
	return v
}

// call runs a tool; args may be any JSON-marshalable value or a
// json.RawMessage (sent as is).
func (c *client) call(name string, args any) result {
	c.t.Helper()
	r, err := c.callErr(name, args)
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return r
}

func (c *client) callErr(name string, args any) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c.callCtx(ctx, name, args)
}

// callCtx is callErr bounded by ctx instead of a minute.
func (c *client) callCtx(ctx context.Context, name string, args any) (result, error) {
	return c.callParams(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// callParams runs a tool with full params (a retry).
func (c *client) callParams(ctx context.Context, params *mcp.CallToolParams) (result, error) {
	res, err := c.cs.CallTool(ctx, params)
	if err != nil {
		return result{}, err
	}
	r := result{IsError: res.IsError}
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

// ok asserts a successful call.
func (c *client) ok(name string, args any) result {
	c.t.Helper()
	r := c.call(name, args)
	if r.IsError {
		c.t.Fatalf("%s %v: %s", name, args, r.Text)
	}
	return r
}

// fails asserts an error result whose text contains want.
func (c *client) fails(name string, args any, want string) result {
	c.t.Helper()
	r := c.call(name, args)
	if !r.IsError || !strings.HasPrefix(r.Text, "Error: ") || !strings.Contains(r.Text, want) {
		c.t.Fatalf("%s %s: want an error containing %q, got isError=%v %q", name, argString(args), want, r.IsError, r.Text)
	}
	return r
}

func argString(a any) string {
	if raw, ok := a.(json.RawMessage); ok {
		return string(raw)
	}
	b, _ := json.Marshal(a)
	return string(b)
}

type obj = map[string]any

// open opens a terminal and returns its id.
func (c *client) open(args obj) string {
	c.t.Helper()
	r := c.ok(tools.TerminalOpen, args)
	id := r.str("sessionId")
	if !strings.HasPrefix(id, "pty-") {
		c.t.Fatalf("open: no session id in %v", r.S)
	}
	return id
}

func (c *client) send(id, text string) result {
	c.t.Helper()
	return c.ok(tools.TerminalSend, obj{"sessionId": id, "text": text})
}

type build struct {
	once sync.Once
	path string
	err  error
}

// binary is cmd/ptymcp, built once per run.
func binary(t testing.TB) string { return command(t, "ptymcp", "../cmd/ptymcp") }

// command builds the command in dir (relative to this package) once per
// run, as name in a directory TestMain removes.
func command(t testing.TB, name, dir string) string {
	t.Helper()
	dirOnce.Do(func() { binDir, dirErr = os.MkdirTemp("", "ptymcp-test-") })
	if dirErr != nil {
		t.Fatal(dirErr)
	}
	v, _ := builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() {
		b.path = filepath.Join(binDir, name)
		if out, err := exec.Command("go", "build", "-o", b.path, dir).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", dir, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func cleanupBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// syncBuf collects the server's stderr.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fastFlags: readiness timings for tests, testConfig's as flags.
var fastFlags = []string{"-sandbox", "danger-full-access", "-idle-silence-ms", "30000", "-timeout-ms", "60000", "-dispose-grace-ms", "500", "-poll-interval-ms", "10", "-log-level", "debug"}

// stdioServer starts the binary over stdio and connects a client.
func stdioServer(t *testing.T, extra ...string) (*client, *exec.Cmd, *syncBuf) {
	t.Helper()
	return stdioServerArgs(t, withFast(extra...)...)
}

// stdioServerArgs is stdioServer with exactly the given flags.
func stdioServerArgs(t *testing.T, args ...string) (*client, *exec.Cmd, *syncBuf) {
	t.Helper()
	cmd, stderr := binaryCmd(t, "", args...)
	return connect(t, cmd, stderr, "e2e", nil, nil), cmd, stderr
}

// withFast is fastFlags, then extra.
func withFast(extra ...string) []string { return append(slices.Clone(fastFlags), extra...) }

// binaryCmd is the binary with args, in a working folder of its own, its
// stderr collected; with state, its state folder (XDG_STATE_HOME: the
// console's URL files) is there.
func binaryCmd(t *testing.T, state string, args ...string) (*exec.Cmd, *syncBuf) {
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = t.TempDir()
	if state != "" {
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	}
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	return cmd, stderr
}

// connect runs cmd as the MCP client name (with opts and sopts, either
// nil) over stdio; the session is closed when the test ends, and a failed
// test shows the end of the server's stderr.
func connect(t *testing.T, cmd *exec.Cmd, stderr *syncBuf, name string, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *client {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, opts).
		Connect(testkit.Ctx(t), &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, sopts)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		_ = cs.Close() // idempotent: a test may have closed it
		if t.Failed() {
			t.Logf("server stderr:\n%s", tailString(stderr.String(), 4000))
		}
	})
	return &client{t: t, cs: cs}
}

// consoleURLRE is the console's URL line on a stdio server's stderr.
var consoleURLRE = regexp.MustCompile(`ptymcp: console \(watch the terminals in a browser\): (http://127\.0\.0\.1:\d+/#token=[A-Za-z0-9_-]{43})\n`)

// consoleURL waits for the console's URL (with its login token) on stderr.
func consoleURL(t *testing.T, stderr *syncBuf) string {
	t.Helper()
	var url string
	testkit.WaitFor(t, 10*time.Second, "the console URL on stderr", func() bool {
		m := consoleURLRE.FindStringSubmatch(stderr.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return url
}

// callAsync runs a call in a goroutine; its result arrives on the
// channel. A protocol error fails the test, and arrives as an error result.
func callAsync(ctx context.Context, c *client, name string, args any) <-chan result {
	done := make(chan result, 1)
	go func() {
		r, err := c.callCtx(ctx, name, args)
		if err != nil {
			c.t.Errorf("%s: protocol error: %v", name, err)
			r = result{IsError: true, Text: err.Error()}
		}
		done <- r
	}()
	return done
}

// recv is the next value on ch; the test fails with fail if ctx ends
// first.
func recv[T any](t *testing.T, ctx context.Context, ch <-chan T, fail string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatal(fail)
		panic("unreachable")
	}
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func sessionPID(t *testing.T, c *client, id string) int {
	t.Helper()
	for _, s := range c.ok(tools.TerminalList, nil).S["sessions"].([]any) {
		if m := s.(map[string]any); m["sessionId"] == id {
			return int(m["pid"].(float64))
		}
	}
	t.Fatalf("session %s not listed", id)
	return 0
}

// httpSrv is the binary serving streamable HTTP.
type httpSrv struct {
	url       string // the endpoint, http(s)://ADDR/mcp
	addr      string // the bound address
	token     string
	tokenFile string
	cmd       *exec.Cmd
	stderr    *syncBuf
	tr        *http.Transport // the tests' requests go through it (a TLS test adds its root)
}

// httpServer starts the binary with -http on a free loopback port and its
// token file in a temporary directory.
func httpServer(t *testing.T, extra ...string) *httpSrv {
	t.Helper()
	args := []string{"-http", "127.0.0.1:0", "-http-token-file", filepath.Join(t.TempDir(), "token")}
	return startHTTP(t, t.TempDir(), append(args, extra...)...)
}

// startHTTP starts the binary with fastFlags, then args, and its user
// config directory (XDG_CONFIG_HOME) at configHome, so no test touches
// the real one; it returns once the server reports its endpoint.
func startHTTP(t *testing.T, configHome string, args ...string) *httpSrv {
	t.Helper()
	cmd := exec.Command(binary(t), append(slices.Clone(fastFlags), args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configHome)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &httpSrv{cmd: cmd, stderr: &syncBuf{}, tr: &http.Transport{}}
	waited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); _ = pw.Close(); close(waited) }()
	t.Cleanup(func() {
		// SIGTERM disposes every owner, then the server exits cleanly.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
			if waitErr != nil {
				t.Errorf("HTTP server exit after SIGTERM: %v", waitErr)
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
			t.Errorf("HTTP server still running 20s after SIGTERM")
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", tailString(s.stderr.String(), 4000))
		}
	})
	t.Cleanup(s.tr.CloseIdleConnections)
	type started struct{ url, addr, tokenFile string }
	up := make(chan started, 1)
	go func() {
		var st started
		sc := bufio.NewScanner(pr)
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
				st.url, st.addr = v, m["addr"].(string)
				select {
				case up <- st:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case st := <-up:
		s.url, s.addr, s.tokenFile = st.url, st.addr, st.tokenFile
	case <-waited:
		t.Fatalf("the HTTP server exited before serving: %v\n%s", waitErr, s.stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("the HTTP server did not report its address\n%s", s.stderr)
	}
	b, err := os.ReadFile(s.tokenFile)
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	s.token = strings.TrimSpace(string(b))
	return s
}

// bearer adds the token to every request, as an MCP client configured
// with an Authorization header does.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// httpClient connects an SDK client that sends the server's token.
func httpClient(t *testing.T, s *httpSrv) *client {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http", Version: "0"}, nil).Connect(testkit.Ctx(t),
		&mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{s.token, s.tr}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{t: t, cs: cs}
}

// reply is one raw HTTP answer.
type reply struct {
	status int
	header http.Header
	body   string
}

// raw sends one request to the server's endpoint; hdr holds name, value
// pairs. An open event stream (a GET answered 200) is closed unread.
func (s *httpSrv) raw(t *testing.T, method, body string, hdr ...string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Transport: s.tr}).Do(req)
	if err != nil {
		t.Fatalf("%s %v: %v", method, hdr, err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	if method != http.MethodGet || resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		r.body = string(b)
	}
	return r
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// post sends a JSON-RPC body as an MCP client does, plus hdr.
func (s *httpSrv) post(t *testing.T, body string, hdr ...string) reply {
	t.Helper()
	return s.raw(t, http.MethodPost, body, append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, hdr...)...)
}

// session initializes an MCP session with the token (and hdr) and
// returns its id, ready for the event stream.
func (s *httpSrv) session(t *testing.T, hdr ...string) string {
	t.Helper()
	auth := []string{"Authorization", "Bearer " + s.token}
	r := s.post(t, initBody, append(auth, hdr...)...)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q: %s", r.status, sid, r.body)
	}
	if r := s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, append(auth, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")...); r.status != http.StatusAccepted {
		t.Fatalf("initialized: HTTP %d: %s", r.status, r.body)
	}
	return sid
}

// stream opens (and closes) the session's GET event stream.
func (s *httpSrv) stream(t *testing.T, sid string, hdr ...string) reply {
	t.Helper()
	return s.raw(t, http.MethodGet, "", append([]string{"Accept", "text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}, hdr...)...)
}

func (s *httpSrv) port(t *testing.T) string {
	t.Helper()
	_, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// oneLine asserts a refusal: the status, and a one-line text body that
// starts with prefix.
func oneLine(t *testing.T, what string, r reply, status int, prefix string) {
	t.Helper()
	if r.status != status || !strings.HasPrefix(r.body, prefix) || strings.Count(r.body, "\n") != 1 || !strings.HasSuffix(r.body, "\n") {
		t.Fatalf("%s: want HTTP %d %q…, got HTTP %d %q", what, status, prefix, r.status, r.body)
	}
}

// noCORS asserts a response carries no CORS header.
func noCORS(t *testing.T, what string, r reply) {
	t.Helper()
	for k := range r.header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Fatalf("%s: CORS header %s: %q", what, k, r.header.Get(k))
		}
	}
}

// runFails runs the binary with fastFlags and args, which must make it
// exit with status 1 before serving; it returns its output.
func runFails(t *testing.T, configHome string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), append(slices.Clone(fastFlags), args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configHome)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("%v: want exit status 1, got %v\n%s", args, err, out)
	}
	if strings.Contains(string(out), "serving streamable HTTP") {
		t.Fatalf("%v: the server listened before refusing\n%s", args, out)
	}
	return string(out)
}

var (
	dirOnce sync.Once
	binDir  string
	dirErr  error
	builds  sync.Map // command name → *build
)
