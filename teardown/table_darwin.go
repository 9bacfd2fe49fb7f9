//go:build darwin

package teardown

// hostTable is sysctl kern.proc, with session ids from getsid(2).
func hostTable() table { return kinfoTable{sysctlSource{}} }
