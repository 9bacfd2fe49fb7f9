package linux

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if runHelper() {
		return
	}
	goleak.VerifyTestMain(m)
}
