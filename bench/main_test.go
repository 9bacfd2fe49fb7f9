package bench

import (
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// runVar marks every process this binary starts (benchmarks and the idle
// cost test alike), so the final check finds anything a session, a raw
// baseline shell or a teardown left behind.
const runVar = "PA_BENCH_TEST_RUN"

func TestMain(m *testing.M) {
	restore := testkit.PrivateState()
	code := testkit.Main(m, runVar, func(*testkit.LeakChecker) {})
	restore()
	testkit.RemoveBinaries()
	os.Exit(code)
}
