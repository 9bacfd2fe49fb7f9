//go:build !linux

package local

// awaitExit returns at once: without pidfds, cmd.Wait blocks in the kernel
// (holding an OS thread while the session lives).
func awaitExit(int) {}
