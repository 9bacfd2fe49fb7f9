package local

import (
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// runVar marks every process this test binary starts: shells inherit it
// from the default parent environment, and their children from them.
const runVar = "PA_LOCAL_TEST_RUN"

var (
	runID   string
	checker *testkit.LeakChecker
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, runVar, func(c *testkit.LeakChecker) { checker, runID = c, c.Value() }))
}

func trackShell(pid int) { checker.TrackShell(pid) }
