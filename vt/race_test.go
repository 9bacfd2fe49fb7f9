//go:build race

package vt

// The race detector slows the flood tests by an order of magnitude; they
// shrink their input under it.
func init() { raceEnabled = true }
