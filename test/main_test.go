package test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/leakcheck"
	"go.uber.org/goleak"
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
	var err error
	if checker, err = leakcheck.New(runVar); err != nil {
		fmt.Fprintln(os.Stderr, "setenv:", err)
		os.Exit(2)
	}
	runID = checker.Value()
	code := m.Run()
	if leaked := checker.Final(5 * time.Second); leaked > 0 && code == 0 {
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

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
