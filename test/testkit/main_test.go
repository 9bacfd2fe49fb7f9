package testkit

import (
	"os"
	"testing"
)

// TestMain runs the fixtures' own tests under the leak check they give
// every other test binary, and deletes the ptyhost StartHost built.
func TestMain(m *testing.M) {
	code := Main(m, "PA_TESTKIT_RUN", func(*LeakChecker) {})
	RemoveBinaries()
	os.Exit(code)
}
