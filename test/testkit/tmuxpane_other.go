//go:build !linux

package testkit

// TmuxPane is one tmux pane; without /proc it cannot be looked at.
type TmuxPane struct{}

// OpenTmuxPane returns ErrTmuxPaneUnsupported off Linux.
func OpenTmuxPane(pid int, tty string) (*TmuxPane, error) { return nil, ErrTmuxPaneUnsupported }

// Close does nothing.
func (*TmuxPane) Close() error { return nil }

// Ready is never true.
func (*TmuxPane) Ready() (ok bool, seen string) { return false, ErrTmuxPaneUnsupported.Error() }
