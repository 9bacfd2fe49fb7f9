package adversarial

import (
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/leakcheck"
)

// runVar marks every process this test binary starts (the ptymcp servers
// and their shells): none may outlive the tests, and no goroutine either.
const runVar = "PTYACTOR_ADVERSARIAL_RUN"

func TestMain(m *testing.M) {
	code := leakcheck.Main(m, runVar, func(*leakcheck.Checker) {})
	removeBinaries()
	os.Exit(code)
}
