package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// The end-to-end tests build cmd/ptymcp and drive the binary as an MCP
// client would.

// The whole lifecycle over stdio against the built binary.
func TestStdioLifecycle(t *testing.T) {
	c, cmd, stderr := stdioServer(t)
	r := c.ok(tools.TerminalOpen, nil) // type omitted: one backend
	id := r.str("sessionId")
	if r.str("type") != "shell" || r.S["status"].(map[string]any)["kind"] != "running" {
		t.Fatalf("open: %v", r.S)
	}
	if got := c.send(id, "pwd").Text; !strings.Contains(got, cmd.Dir+"\n") {
		t.Fatalf("default cwd is the workspace %s: %q", cmd.Dir, got)
	}
	c.send(id, "X=kept; cd /tmp")
	if got := c.send(id, `echo "$X $PWD"`).Text; !strings.Contains(got, "kept /tmp\n") {
		t.Fatalf("state: %q", got)
	}
	r = c.send(id, "python3 -q")
	if r.str("waitReason") != "stdin_read" || r.str("reader") != "python3" {
		t.Fatalf("python: %q", r.Text)
	}
	if r = c.send(id, "sum(range(10))"); r.str("waitReason") != "stdin_read" || !strings.Contains(r.Text, "45\n>>> ") {
		t.Fatalf("python eval: %q", r.Text)
	}
	c.send(id, "exit()")

	task := c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "echo bg-start; sleep 0.3; echo bg-end", "runInBackground": true}).str("taskId")
	r = c.ok(tools.TaskOutput, obj{"taskId": task, "timeoutMs": 20000})
	if !strings.Contains(r.Text, "bg-start") || !strings.Contains(r.Text, "bg-end") || !strings.HasSuffix(r.Text, "[status: completed, wait: stdin_read, exit code 0]") {
		t.Fatalf("task_output: %q", r.Text)
	}

	task = c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "sleep 50", "runInBackground": true}).str("taskId")
	waitForeground(t, c, id, "sleep")
	if r = c.ok(tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGINT"}); r.S["delivered"] != true {
		t.Fatalf("signal: %q", r.Text)
	}
	if r = c.ok(tools.TaskOutput, obj{"taskId": task, "timeoutMs": 20000}); !strings.Contains(r.Text, "exit code 130]") {
		t.Fatalf("after SIGINT: %q", r.Text)
	}

	c.send(id, "seq 101 110")
	if r = c.ok(tools.TerminalRead, obj{"sessionId": id, "offset": 1, "count": 2}); !strings.HasPrefix(r.Text, "109\n110\n[lines: 1-3 of ") {
		t.Fatalf("read page: %q", r.Text)
	}
	pid := sessionPID(t, c, id)
	if r = c.ok(tools.TerminalClose, obj{"sessionId": id}); r.str("outcome") != "closed" {
		t.Fatalf("close: %q", r.Text)
	}
	if alive(pid) {
		t.Fatalf("shell %d alive after close", pid)
	}
	if r = c.ok(tools.TerminalList, nil); r.Text != "(no terminal sessions)" {
		t.Fatalf("list: %q", r.Text)
	}
	// Logs went to stderr (stdout carried only the protocol, or the client
	// would have failed to decode).
	if !strings.Contains(stderr.String(), `"message":"owner opened"`) {
		t.Fatalf("no logs on stderr: %q", tailString(stderr.String(), 500))
	}
}

// sleeping opens a terminal running text (sleeps) in the background, once
// a sleep is in the foreground, and returns its id and the processes of
// its session.
func sleeping(t *testing.T, c *client, text string) (id string, members []int) {
	t.Helper()
	id = c.open(nil)
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": text, "runInBackground": true})
	waitForeground(t, c, id, "sleep")
	return id, sessionMembers(sessionPID(t, c, id))
}

// A client that goes away takes its terminals with it: the server
// disposes the owner, leaves no process behind, and exits.
func TestStdioDisconnectLeavesNothing(t *testing.T) {
	c, cmd, stderr := stdioServer(t)
	_, members := sleeping(t, c, "sleep 1000 & sleep 1000")
	if len(members) < 3 {
		t.Fatalf("expected the shell and two sleeps, got %v", members)
	}
	done := make(chan error, 1)
	go func() { done <- c.cs.Close() }() // closes the server's stdin
	select {
	case err := <-done:
		if err != nil {
			t.Logf("close: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("server did not exit after the client disconnected\n%s", tailString(stderr.String(), 2000))
	}
	if st := cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Fatalf("server exit: %v", cmd.ProcessState)
	}
	noneAlive(t, members, "of the closed session survived")
	if !strings.Contains(stderr.String(), `"message":"owner disposed"`) {
		t.Fatalf("no disposal logged: %s", tailString(stderr.String(), 1000))
	}
}

// SIGTERM to the server disposes everything, then it exits.
func TestSIGTERMDisposesAll(t *testing.T) {
	c, cmd, _ := stdioServer(t)
	_, members := sleeping(t, c, "sleep 1000")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 15*time.Second, "server exit", func() bool {
		for _, p := range append(members, cmd.Process.Pid) {
			if alive(p) {
				return false
			}
		}
		return true
	})
}

// Malformed requests get clear errors and the server keeps serving.
func TestStdioMalformedRequests(t *testing.T) {
	c, _, _ := stdioServer(t)
	id := c.open(nil)
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": []int{1}}, "text must be a string")
	c.fails(tools.TerminalRead, obj{"sessionId": id, "count": "10"}, `count must be an integer, got "10"`)
	c.fails(tools.TerminalSend, obj{"text": "x"}, "sessionId must be a non-empty string")
	c.fails(tools.TerminalSignal, obj{"sessionId": id}, "signal must be one of")
	c.fails(tools.TerminalSend, json.RawMessage(`"just a string"`), "arguments must be a JSON object")
	big := strings.Repeat("é", 1<<18) // 512 KiB of text: within a stdio message's 4 MiB
	r := c.fails(tools.TerminalSend, obj{"sessionId": id, "text": big}, "text is 524288 bytes; the limit is 262144")
	if len(r.Text) > tools.DefaultMaxResultBytes {
		t.Fatalf("error text %d bytes", len(r.Text))
	}
	// 6 MiB: the transport answers the call with a JSON-RPC error and the
	// connection stays.
	huge := strings.Repeat("é", 3<<20)
	if _, err := c.callErr(tools.TerminalSend, obj{"sessionId": id, "text": huge}); err == nil || !strings.Contains(err.Error(), "longer than 4194304 bytes") {
		t.Fatalf("6 MiB message: %v", err)
	}
	if _, err := c.callErr("no_such_tool", obj{}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("unknown tool: %v", err)
	}
	if got := c.send(id, "echo alive").Text; !strings.Contains(got, "alive\n") {
		t.Fatalf("server stopped serving: %q", got)
	}
}

// A 200 MB output flood: the server's peak RSS stays bounded and the
// result stays within maxResultBytes.
func TestFloodBoundedRSS(t *testing.T) {
	// The flood takes seconds, over a minute on a loaded machine: the
	// send's deadline (-timeout-ms, after fastFlags' 60 s) and the call's
	// bound are guards here, not a speed requirement; until prompt: a
	// stall of the loaded machine does not settle it as silence either.
	const guard = 5 * time.Minute
	c, cmd, _ := stdioServer(t, "-timeout-ms", strconv.FormatInt(guard.Milliseconds(), 10))
	id := c.open(nil)
	ctx, cancel := context.WithTimeout(context.Background(), guard+time.Minute)
	defer cancel()
	start := time.Now()
	r, err := c.callCtx(ctx, tools.TerminalSend, obj{"sessionId": id, "text": "yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000; echo; echo flood-done", "until": "prompt"})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("flood send after %s: %v", took.Round(time.Millisecond), err)
	}
	if r.IsError || len(r.Text) > tools.DefaultMaxResultBytes || r.S["truncated"] != true || !strings.Contains(r.Text, "flood-done\n") || r.str("waitReason") != "stdin_read" {
		t.Fatalf("flood result: %d bytes, truncated=%v, wait=%v, tail %q", len(r.Text), r.S["truncated"], r.S["waitReason"], tailString(r.Text, 200))
	}
	hwm := vmHWM(t, cmd.Process.Pid)
	t.Logf("200 MB flood in %s, server peak RSS %d MiB", took.Round(time.Millisecond), hwm>>20)
	if hwm > 150<<20 {
		t.Fatalf("server peak RSS %d MiB for a 200 MB flood", hwm>>20)
	}
	if r = c.ok(tools.TerminalRead, obj{"sessionId": id}); len(r.Text) > tools.DefaultMaxResultBytes {
		t.Fatalf("read after flood: %d bytes", len(r.Text))
	}
}

// vmHWM is a process's peak resident set size in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in %s", b)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 10
}

// A client that dies in the middle of a foreground send (its end of the
// pipes closes; no graceful shutdown): the server disposes the owner at
// once, which settles the send, then exits; nothing survives.
func TestStdioClientDiesDuringSend(t *testing.T) {
	// exitBound states the promise that the client's death itself ends
	// its send, not the send's own timers: with a 60 s silence tier and a
	// 120 s deadline neither can end it within the bound, which leaves a
	// wide margin on a loaded machine.
	const exitBound = 30 * time.Second
	cmd := exec.Command(binary(t), append(slices.Clone(fastFlags), "-idle-silence-ms", "60000", "-timeout-ms", "120000")...)
	cmd.Dir = t.TempDir()
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dies", Version: "0"}, nil).
		Connect(testkit.Ctx(t), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cs: cs}
	id := c.open(nil)
	pid := sessionPID(t, c, id)
	callCtx, cancelCall := context.WithCancel(context.Background())
	defer cancelCall()
	callDone := make(chan struct{})
	go func() {
		defer close(callDone)
		_, _ = cs.CallTool(callCtx, &mcp.CallToolParams{Name: tools.TerminalSend, Arguments: obj{"sessionId": id, "text": "sleep 1000"}})
	}()
	testkit.WaitFor(t, 20*time.Second, "sleep in the foreground", func() bool { return foregroundComm(pid) == "sleep" })
	members := sessionMembers(pid)
	start := time.Now()
	_ = stdin.Close() // the client is gone
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("server exit: %v\n%s", err, tailString(stderr.String(), 2000))
		}
	case <-time.After(exitBound):
		t.Fatalf("server still running %s after its client died\n%s", exitBound, tailString(stderr.String(), 2000))
	}
	t.Logf("the server exited %s after its client died", time.Since(start).Round(time.Millisecond))
	noneAlive(t, members, "survived the disconnect")
	cancelCall() // the dead client's own call, so its session can close
	<-callDone
	_ = cs.Close()
}

// The default mode, workspace-write, confines the terminal: the workspace
// is writable, the rest of the host is not, and state still persists.
func TestStdioWorkspaceWriteByDefault(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	outside := t.TempDir()
	flags := slices.Clone(fastFlags)
	i := slices.Index(flags, "-sandbox")
	flags = slices.Delete(flags, i, i+2) // the server's own default
	cs, _, _ := stdioServerArgs(t, append(flags, "-workspace", ws)...)
	id := cs.open(nil)
	if got := cs.send(id, "pwd; touch inside && echo wrote-inside").Text; !strings.Contains(got, ws+"\n") || !strings.Contains(got, "wrote-inside\n") {
		t.Fatalf("inside the workspace: %q", got)
	}
	got := cs.send(id, "touch "+outside+"/escaped; echo rc=$?").Text
	if strings.Contains(got, "rc=0") {
		t.Fatalf("a write outside the workspace succeeded: %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the host file exists: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside")); err != nil {
		t.Fatalf("the workspace file is missing: %v", err)
	}
}

func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed (apt-get install bubblewrap; .ci/run installs it)")
	}
}
