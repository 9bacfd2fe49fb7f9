package teardown

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// Helper processes: the test binary re-executes itself with helperEnv set to
// a mode and runs that behaviour instead of the tests (os/exec's pattern).
const (
	helperEnv = "TEARDOWN_TEST_HELPER"
	markerEnv = "TEARDOWN_TEST_MARKER"
)

func init() {
	if os.Getenv(helperEnv) == "leaderexit" {
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode, os.Getenv(markerEnv)))
	}
	goleak.VerifyTestMain(checkProcesses{m})
}

// helperMain runs one scripted behaviour.
//
//   - "stop": stops itself with SIGSTOP; once continued, a SIGTERM writes
//     "TERM" to the marker file and exits. The marker proves teardown sent
//     SIGCONT after SIGTERM.
//   - "leaderexit": prints "ready", then ends its main thread alone (the
//     exit system call, not exit_group, as pthread_exit does). The process
//     reads as a zombie in /proc while its other threads run on, for ever.
//   - "record": prints "ready" and appends the name of every catchable
//     signal it receives to the marker file, forever. It proves a process
//     was never signalled.
func helperMain(mode, marker string) int {
	switch mode {
	case "stop":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
			fmt.Fprintln(os.Stderr, "helper stop:", err)
			return 2
		}
		<-ch
		if err := os.WriteFile(marker, []byte("TERM"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "helper stop:", err)
			return 2
		}
		return 0
	case "leaderexit":
		// The main goroutine is locked to the main thread by init (Go
		// wedges, never ends, a main thread a goroutine exits on), so the
		// raw exit ends exactly that thread.
		go func() {
			for {
				time.Sleep(time.Hour)
			}
		}()
		fmt.Println("ready")
		syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
		return 2
	case "record":
		ch := make(chan os.Signal, 8)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
			syscall.SIGCONT, syscall.SIGTSTP, syscall.SIGUSR1, syscall.SIGUSR2)
		fmt.Println("ready")
		for sig := range ch {
			f, err := os.OpenFile(marker, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return 2
			}
			fmt.Fprintln(f, sig)
			f.Close()
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// tracked holds every real process the tests started or captured, so
// TestMain can prove none outlived the suite.
var tracked = struct {
	sync.Mutex
	ids map[linux.Identity]string
}{ids: make(map[linux.Identity]string)}

func track(id linux.Identity, what string) {
	tracked.Lock()
	defer tracked.Unlock()
	if _, ok := tracked.ids[id]; !ok {
		tracked.ids[id] = what
	}
}

// checkProcesses runs the tests, then fails the run if any tracked process
// is still running (zombies waiting for init are fine), killing it so a
// failing suite does not leak processes either.
type checkProcesses struct{ m *testing.M }

func (c checkProcesses) Run() int {
	code := c.m.Run()
	tracked.Lock()
	defer tracked.Unlock()
	var leaked []string
	for id, what := range tracked.ids {
		s, err := hostTable().stat(id.PID)
		if errors.Is(err, linux.ErrNotFound) || errors.Is(err, linux.ErrUnsupported) {
			continue
		}
		if err != nil || s.StartTime != id.StartTime || !s.Alive() {
			continue
		}
		leaked = append(leaked, fmt.Sprintf("pid %d (%s, %q state %c)", id.PID, what, s.Comm, s.State))
		_ = ProcSignaler{}.Signal(id, syscall.SIGKILL)
	}
	if len(leaked) > 0 {
		sort.Strings(leaked)
		fmt.Fprintf(os.Stderr, "teardown tests leaked %d process(es):\n", len(leaked))
		for _, l := range leaked {
			fmt.Fprintln(os.Stderr, "  ", l)
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}
