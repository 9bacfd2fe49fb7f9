//go:build !linux

package linux

// defaultRoot fails outside Linux: there is no procfs to read, and reporting
// every pid as ErrNotFound would make callers believe processes had exited.
func defaultRoot() (string, error) { return "", ErrUnsupported }
