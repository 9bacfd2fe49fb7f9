//go:build !linux

package local

// waitingReader: without the exact tier, nothing proves a wait.
func (s *session) waitingReader(int) (string, bool) { return "", false }

// foregroundProgram: not read on this platform.
func foregroundProgram(int) (program, cwd string) { return "", "" }
