//go:build !linux

package linux

func runHelper() bool { return false }
