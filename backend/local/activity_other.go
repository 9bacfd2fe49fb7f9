//go:build !linux

package local

import "github.com/ptyactor/ptyactor/messages"

// waitingReader: without the exact tier, nothing proves a wait.
func (s *session) waitingReader(int) (string, messages.Reading, bool) {
	return "", messages.Reading{}, false
}

// foregroundProgram: not read on this platform.
func foregroundProgram(int) (program, cwd string) { return "", "" }
