package bench

import (
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/fixture"
	"github.com/ptyactor/ptyactor/test/leakcheck"
)

// runVar marks every process this binary starts (benchmarks and the idle
// cost test alike), so the final check finds anything a session, a raw
// baseline shell or a teardown left behind.
const runVar = "PA_BENCH_TEST_RUN"

func TestMain(m *testing.M) {
	restore := fixture.PrivateState()
	code := leakcheck.Main(m, runVar, func(*leakcheck.Checker) {})
	restore()
	fixture.RemoveBinaries()
	os.Exit(code)
}
