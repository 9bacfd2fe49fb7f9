// Package tmuxpane tells, from /proc, whether the program in a tmux pane
// waits for input with every key it was sent read, so the tests that hold
// the emulator to tmux look at tmux's screen only when its program is done
// drawing: the runtime's own probe (probes/linux.ProbeGroup, as
// backend/local uses it) on the pane's process tree and its terminal's
// foreground group. Linux only; elsewhere Open returns ErrUnsupported.
package tmuxpane
