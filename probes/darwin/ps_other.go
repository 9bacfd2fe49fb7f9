//go:build !darwin

package darwin

import "context"

var _ Runner = ExecRunner

// ExecRunner fails with ErrUnsupported outside macOS: ps there takes other
// options, and Linux has /proc.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	return nil, ErrUnsupported
}
