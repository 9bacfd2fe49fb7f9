// Package faulty is a scripted backend for fault injection: a
// backend.Backend whose sessions fake a shell (or a program reading the
// terminal) without a process, and whose every backend call can be made to
// fail, hang, panic, lie or end the session, one call at a time.
//
// It exists so that the runtime's failure paths can be tested as precisely
// as its happy path, by ptyactor itself and by anyone who builds on it: an
// integration that drives actors.Service (an agent loop, a tool server) can
// register a faulty.Backend and check what its own users see when a spawn
// hangs, a write fails or a cleanup leaves a process behind.
//
// # The fake terminal
//
// A session starts by printing a banner and a prompt. Each submitted line
// (text followed by Enter, "\r") is echoed and answered by the backend's
// Responder: by default the line's output is the line itself and the shell
// prints a verified prompt, so the send settles as stdin_read. A Responder
// may leave a command running (no prompt): the send then settles by
// silence, by SIGINT (which ends the command with status 130 and prints a
// fresh prompt, as bash does), or by its deadline. Faults never depend on
// timing: output is applied synchronously inside the call that produced it. With Reader, sessions run a program that reads the
// terminal and prints no prompt marker, so only the exact tier (ProbeStdin)
// proves it waits.
//
// # Scripting faults
//
// Faults are queued per operation and consumed one per call, in order; a
// call that finds its queue empty behaves normally. Backend.Script queues
// for every session (and for Spawn); Session.Script for one session, and a
// session's own queue is used first.
//
//	b := faulty.New("shell")
//	b.Script(faulty.OpSpawn, faulty.Fail(errBoom))  // the first spawn fails
//	b.Script(faulty.OpClose, faulty.Fail(errBusy))  // the first close fails, the next succeeds
//	b.Script(faulty.OpWrite, faulty.Hang())         // the first write blocks until cancelled
//
// The operations are the backend calls the runtime makes (OpSpawn, OpWrite,
// OpTryWrite, OpSignal, OpProbe, OpClose, OpTakeOutput, OpRead). Which faults make sense for which
// operation is documented on each constructor; scripting a fault an
// operation cannot express panics, naming both, so a mistaken script fails
// loudly instead of testing nothing.
//
// Backend.Entered waits until a number of calls of an operation have
// started, so a test can act (cancel a context, kill the session) while a
// call is in flight, without sleeping; Backend.Hold keeps a call in flight
// until the test releases it. Session.Emit, Finish and Exit act on the
// terminal from outside any call (output from a background job, the end
// of a command a Responder left running, the shell's exit).
// Session.Writes, Signals and Closes report what reached the fake
// terminal.
//
// # Goroutines
//
// A Backend starts no goroutine of its own except to deliver an output
// barrier (Syncer), and every call it blocks in ends when the caller's
// context ends or the session closes, so goleak stays quiet once the
// runtime is shut down.
package faulty
