//go:build linux

package teardown

import "github.com/ptyactor/ptyactor/probes/linux"

// hostTable is /proc.
func hostTable() table { return procTable{linux.FS{}} }
