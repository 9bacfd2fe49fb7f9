package vt

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutines; the tests run tmux and seq through
// os/exec, whose goroutines must be joined too.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
