//go:build !linux

package local

// awaitExec returns at once: without /proc a forked command cannot be told
// from one that exec'd.
func (*session) awaitExec(int) {}

// flushInput: no handle on the terminal's slave side here.
func (*session) flushInput() {}
