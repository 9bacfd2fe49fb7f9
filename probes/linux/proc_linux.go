//go:build linux

package linux

func defaultRoot() (string, error) { return "/proc", nil }
