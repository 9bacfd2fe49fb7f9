package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// runVar marks every process this test binary starts, including the
// ptymcp servers it builds and runs and their shells: none may outlive
// the tests.
const runVar = "PTYMCP_TEST_RUN"

var checker *testkit.LeakChecker

func TestMain(m *testing.M) {
	restore := testkit.PrivateState()
	code := testkit.Main(m, runVar, func(c *testkit.LeakChecker) { checker = c })
	restore()
	cleanupBinary()
	testkit.RemoveBinaries()
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
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testConfig(), Backends: []backend.Backend{local.New(lopts)}})
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

// noneAlive fails the test, saying "process PID " and what, when a
// process of members still runs.
func noneAlive(t *testing.T, members []int, what string) {
	t.Helper()
	for _, p := range members {
		if alive(p) {
			t.Fatalf("process %d %s", p, what)
		}
	}
}

// takeInFlight takes a terminal over while the agent's "sleep 30" runs:
// click is the page's script that takes it, shown what the page shows
// then; the send in flight must settle as taken over.
func takeInFlight(t *testing.T, b *testkit.Browser, c *client, id, click, shown string) {
	t.Helper()
	done := sendInFlight(t, b, c, id, "sleep 30")
	b.Eval(click, nil)
	b.WaitJS(shown, 10*time.Second)
	takenOver(t, done)
}

// stillRunning holds the page's badge to the command taken over without
// interrupt: still running.
func stillRunning(t *testing.T, b *testkit.Browser) {
	t.Helper()
	var badge string
	b.Eval(`ptyView.badge`, &badge)
	if badge != "running" {
		t.Fatalf("taken over without interrupt, the command's badge is %q; want it still running", badge)
	}
}

// handBack hands a terminal the page took over back to the agent, whose
// next send must run, and returns that send's result, whose hand-back
// summary must list the line typed, in full.
func handBack(t *testing.T, b *testkit.Browser, c *client, id, typed string) result {
	t.Helper()
	b.Eval(`document.getElementById("handback").click()`, nil)
	b.WaitJS(`ptyView.control.holder === "agent" && !ptyView.control.you && document.getElementById("banner").hidden && ptyView.term.options.disableStdin`, 10*time.Second)
	r := c.send(id, "echo agent-$((6*7))")
	if !strings.Contains(r.Text, "agent-42") {
		t.Fatalf("the agent's send after the hand back: %s", r.Text)
	}
	hb, _ := r.S["handback"].(map[string]any)
	if hb == nil || hb["reason"] != "returned" || !strings.Contains(fmt.Sprint(hb["lines"]), typed) {
		t.Fatalf("the agent's first result after the hand back: handback %v\n%s", hb, r.Text)
	}
	return r
}

// secretTakenOnce holds a secret typed at link to what the terminal did
// with it: the wait for its len= line says a person entered a secret (of
// pw's length), and the link, used, is refused the next time.
func (r *secretRig) secretTakenOnce(b *testkit.Browser, id, link, pw string) {
	t := r.t
	t.Helper()
	res := r.call(tools.TerminalWait, obj{"sessionId": id, "pattern": `len=[0-9]+\s`})
	if res.IsError || !strings.Contains(res.Text, "len="+strconv.Itoa(len(pw))) || res.S["secretEntered"] != true ||
		!strings.Contains(res.Text, "A person entered the secret at the prompt.") || res.S["secretUrl"] != nil {
		t.Fatalf("the wait after the secret: %v\n%s", res.S, res.Text)
	}
	b.Open("about:blank")
	b.Open(link)
	b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "secret_link_used"`, 15*time.Second)
}

// consoleURLRE is the console's URL line on a stdio server's stderr.
var consoleURLRE = regexp.MustCompile(`ptymcp: console \(watch the terminals in a browser\): (http://127\.0\.0\.1:\d+/#token=[A-Za-z0-9_-]{43})\n`)

// awaitConsoleURL waits for the console's URL (with its login token) on stderr.
func awaitConsoleURL(t *testing.T, stderr *syncBuf) string {
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

var (
	dirOnce sync.Once
	binDir  string
	dirErr  error
	builds  sync.Map // command name → *build
)

// acceptingClient is a client that elicits by URL and accepts every
// elicitation: each one's params arrive on asked, and each completion's id
// on completed.
func acceptingClient() (opts *mcp.ClientOptions, asked chan *mcp.ElicitParams, completed chan string) {
	asked, completed = make(chan *mcp.ElicitParams, 1), make(chan string, 1)
	return &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	}, asked, completed
}
