//go:build !linux

package local

import "golang.org/x/sys/unix"

// preExec: without /proc a forked command cannot be told from one that
// exec'd, so there is never one to follow.
type preExec struct{}

// awaitExec returns at once: without /proc a forked command cannot be told
// from one that exec'd.
func (*session) awaitExec(int) preExec { return preExec{} }

// initDrop: without /proc a namespace's init cannot be told apart, and
// only Linux has pid namespaces.
func (*session) initDrop(int, unix.Signal) string { return "" }

// redeliver has nothing to follow (see preExec).
func (*session) redeliver(preExec, int, unix.Signal) {}

// flushInput: no handle on the terminal's slave side here; the answers
// to the program's queries still waiting to be written go all the same.
func (s *session) flushInput(int) { s.flushReplies(0, nil) }
