//go:build !darwin

package darwin

import (
	"context"
	"errors"
	"testing"
)

func TestExecRunnerUnsupported(t *testing.T) {
	if _, err := Snapshot(context.Background(), nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Snapshot with the default runner = %v; want ErrUnsupported", err)
	}
}
