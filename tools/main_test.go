package tools

import (
	"testing"

	"go.uber.org/goleak"
)

// The fuzz target runs a Service: no goroutine of it may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
