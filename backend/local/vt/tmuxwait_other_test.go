//go:build !linux

package vt

// paneWaiter needs /proc: elsewhere the tests that use it are skipped.
type paneWaiter struct{}

func newPaneWaiter(s *tmuxServer) *paneWaiter {
	s.t.Helper()
	s.t.Skip("telling when the pane's program waits for input needs Linux's /proc")
	return nil
}

func (*paneWaiter) ready() (ok bool, seen string) { return false, "" }
