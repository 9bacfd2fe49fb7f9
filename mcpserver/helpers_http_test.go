package mcpserver

// The HTTP rig the tests of -http share: the binary serving streamable
// HTTP (startHTTP), its SDK client with the token, raw requests and
// their checks, and the refused start (runFails).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
)

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
