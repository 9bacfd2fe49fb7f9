package adversarial

import (
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// runVar marks every process this test binary starts (the ptymcp servers
// and their shells): none may outlive the tests, and no goroutine either.
const runVar = "PTYACTOR_ADVERSARIAL_RUN"

func TestMain(m *testing.M) {
	code := testkit.Main(m, runVar, func(*testkit.LeakChecker) {})
	removeBinaries()
	os.Exit(code)
}
