package mcpserver

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// exitGuard bounds the server's exit in the tests below: a guard, never a
// speed requirement (callsWait is the server's own bound).
const exitGuard = 60 * time.Second

// floodServer is the binary over stdio with the pipes in the test's hands.
type floodServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuf
	exited chan error
	c      *client
	// callDone is closed when the call sendInFlight started returns.
	callDone chan struct{}
}

func startFloodServer(t *testing.T) *floodServer {
	t.Helper()
	cmd := exec.Command(binary(t), fastFlags...)
	cmd.Dir = t.TempDir()
	f := &floodServer{cmd: cmd, stderr: &syncBuf{}, exited: make(chan error, 1)}
	cmd.Stderr = f.stderr
	var err error
	if f.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { f.exited <- cmd.Wait() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flood", Version: "0"}, nil).
		Connect(testkit.Ctx(t), &mcp.IOTransport{Reader: stdout, Writer: f.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		err := <-f.exited
		f.exited <- err
		_ = cs.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", tailString(f.stderr.String(), 4000))
		}
	})
	f.c = &client{t: t, cs: cs}
	return f
}

// floodInFlight floods terminal id with cursor-position queries from a
// raw-mode program that never reads its input; it first interrupts such a
// flood once and checks the terminal still answers (the wedge: no answer,
// ever). The flood it leaves runs in a call still in flight.
func (f *floodServer) floodInFlight(t *testing.T, id string) {
	t.Helper()
	c := f.c
	f.sendInFlight(t, id)
	c.ok(tools.TerminalSignal, obj{"sessionId": id, "signal": "SIGINT"})
	f.settled(t)
	ctx, cancel := context.WithTimeout(context.Background(), exitGuard)
	defer cancel()
	r, err := c.callCtx(ctx, tools.TerminalSend, obj{"sessionId": id, "text": "stty sane; echo o''k"})
	if err != nil || r.IsError || !strings.Contains(r.Text, "ok\n") {
		t.Fatalf("echo ok after an interrupted flood: %v %q", err, tailString(r.Text, 300))
	}
	f.sendInFlight(t, id)
}

// sendInFlight starts the flood in a call that stays in flight, and waits
// until it floods.
func (f *floodServer) sendInFlight(t *testing.T, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = f.c.callCtx(ctx, tools.TerminalSend, obj{"sessionId": id, "text": "stty raw -echo; yes $'\\e[6n'"})
	}()
	f.callDone = done
	t.Cleanup(func() { cancel(); <-done })
	waitForeground(t, f.c, id, "yes")
}

// settled waits for the call sendInFlight started.
func (f *floodServer) settled(t *testing.T) {
	t.Helper()
	select {
	case <-f.callDone:
	case <-time.After(exitGuard):
		t.Fatalf("the interrupted flood's call still runs after %s", exitGuard)
	}
}

// awaitExit waits for the server's exit within exitGuard and returns how.
func (f *floodServer) awaitExit(t *testing.T, what string) *exec.ExitError {
	t.Helper()
	select {
	case err := <-f.exited:
		f.exited <- err
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("server exit: %v", err)
		}
		return ee
	case <-time.After(exitGuard):
		t.Fatalf("server still running %s after %s", exitGuard, what)
		return nil
	}
}

// floodingTerminal opens a terminal whose flood runs in a call in flight
// (floodInFlight) and returns the processes of its session.
func (f *floodServer) floodingTerminal(t *testing.T) (members []int) {
	t.Helper()
	id := f.c.open(nil)
	pid := sessionPID(t, f.c, id)
	f.floodInFlight(t, id)
	return sessionMembers(pid)
}

// The client hangs up while a terminal floods and a call is in flight:
// the server ends that call, closes the terminal and exits.
func TestStdioEOFWhileFlooding(t *testing.T) {
	f := startFloodServer(t)
	members := f.floodingTerminal(t)
	start := time.Now()
	_ = f.stdin.Close()
	if ee := f.awaitExit(t, "stdin ended"); ee != nil {
		t.Fatalf("server exit: %v", ee)
	}
	t.Logf("the server exited %s after stdin ended", time.Since(start).Round(time.Millisecond))
	noneAlive(t, members, "of the flooding terminal survived")
}

// A second SIGTERM ends the server at once, whatever the shutdown the
// first one started waits for, here while a terminal floods.
func TestSecondSIGTERMEndsServer(t *testing.T) {
	f := startFloodServer(t)
	members := f.floodingTerminal(t)
	if err := f.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, exitGuard, "the first signal taken", func() bool {
		return strings.Contains(f.stderr.String(), "a second signal ends the process at once")
	})
	// The shutdown may be over already: then the signal finds no process.
	if err := f.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, exec.ErrWaitDelay) && !strings.Contains(err.Error(), "process already finished") {
		t.Fatal(err)
	}
	if ee := f.awaitExit(t, "two SIGTERMs"); ee != nil {
		if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("server exit: %v", ee)
		}
	}
	// Killed by the signal, the server leaves its terminals to the
	// hang-up: the shell and the flood get SIGHUP.
	testkit.WaitFor(t, exitGuard, "the terminal's processes gone", func() bool {
		return !slices.ContainsFunc(members, alive)
	})
}
