package docs

import (
	"testing"

	"go.uber.org/goleak"
)

// TestToolTable runs a Service: no goroutine of it may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
