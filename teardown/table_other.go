//go:build !linux && !darwin

package teardown

import "github.com/ptyactor/ptyactor/probes/linux"

// hostTable is a procfs reader whose every read fails with
// linux.ErrUnsupported; Tree and ProcSignaler refuse before they use it.
func hostTable() table { return procTable{linux.FS{}} }
