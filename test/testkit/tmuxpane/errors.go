package tmuxpane

import "errors"

// ErrUnsupported: the platform has no /proc probe to tell readiness.
var ErrUnsupported = errors.New("tmuxpane: telling when a pane's program waits for input needs Linux's /proc")
