package test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// runVar marks every process this test binary starts through a backend with
// the default parent environment: the shells inherit it and so does every
// process they start, wherever it is re-parented to. tagVar (set per test
// through the backend's trusted map) does the same per test.
const (
	runVar = "PA_E2E_RUN"
	tagVar = "PA_E2E_TAG"
)

var runID string

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, runVar, func(c *testkit.LeakChecker) { checker, runID = c, c.Value() }))
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
