package local

import (
	"fmt"
	"github.com/ptyactor/ptyactor/test/leakcheck"
	"go.uber.org/goleak"
	"os"
	"testing"
	"time"
)

// runVar marks every process this test binary starts: shells inherit it
// from the default parent environment, and their children from them.
const runVar = "PA_LOCAL_TEST_RUN"

var (
	runID   string
	checker *leakcheck.Checker
)

func TestMain(m *testing.M) {
	var err error
	if checker, err = leakcheck.New(runVar); err != nil {
		fmt.Fprintln(os.Stderr, "setenv:", err)
		os.Exit(2)
	}
	runID = checker.Value()
	code := m.Run()
	if n := checker.Final(5 * time.Second); n > 0 && code == 0 {
		code = 1
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "goroutine leak after the tests: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func trackShell(pid int) { checker.TrackShell(pid) }

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
