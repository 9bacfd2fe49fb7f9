package testkit

import "errors"

// The tmux pane helper (TmuxPane, tmuxpane_linux.go) tells, from /proc,
// whether the program in a tmux pane waits for input with every key it
// was sent read, so the tests that hold the emulator to tmux look at
// tmux's screen only when its program is done drawing: the runtime's own
// probe (probes/linux.ProbeGroup, as backend/local uses it) on the pane's
// process tree and its terminal's foreground group. Linux only; elsewhere
// OpenTmuxPane returns ErrTmuxPaneUnsupported.

// ErrTmuxPaneUnsupported: the platform has no /proc probe to tell readiness.
var ErrTmuxPaneUnsupported = errors.New("testkit: telling when a tmux pane's program waits for input needs Linux's /proc")
