package local

import (
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/leakcheck"
)

// runVar marks every process this test binary starts: shells inherit it
// from the default parent environment, and their children from them.
const runVar = "PA_LOCAL_TEST_RUN"

var (
	runID   string
	checker *leakcheck.Checker
)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, runVar, func(c *leakcheck.Checker) { checker, runID = c, c.Value() }))
}

func trackShell(pid int) { checker.TrackShell(pid) }
