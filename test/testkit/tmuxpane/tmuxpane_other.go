//go:build !linux

package tmuxpane

// Pane is one tmux pane; without /proc it cannot be looked at.
type Pane struct{}

// Open returns ErrUnsupported off Linux.
func Open(pid int, tty string) (*Pane, error) { return nil, ErrUnsupported }

// Close does nothing.
func (*Pane) Close() error { return nil }

// Ready is never true.
func (*Pane) Ready() (ok bool, seen string) { return false, ErrUnsupported.Error() }
