//go:build darwin

package darwin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

var _ Runner = ExecRunner

// ExecRunner runs name with args in the C locale (so lstart parses) and
// returns its standard output. Cancelling ctx kills the command.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	return out, nil
}
