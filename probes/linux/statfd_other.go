//go:build !linux

package linux

// devTTY: no descriptor identities off Linux (FS has no StatFD there).
var devTTY uint64
