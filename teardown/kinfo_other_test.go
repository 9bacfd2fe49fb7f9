//go:build !darwin

package teardown

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/probes/darwin"
)

func TestSysctlSourceUnsupported(t *testing.T) {
	if _, err := (kinfoTable{sysctlSource{}}).list(); !errors.Is(err, darwin.ErrUnsupported) {
		t.Errorf("list = %v; want darwin.ErrUnsupported", err)
	}
	if _, err := (kinfoTable{sysctlSource{}}).stat(1); !errors.Is(err, darwin.ErrUnsupported) {
		t.Errorf("stat = %v; want darwin.ErrUnsupported", err)
	}
}
