// Package actors is the ptyactor runtime: the service, owner, session and
// send actors, their supervision, and the Go facade (Service) whose
// context-aware methods send protocol messages and await replies.
//
// # The tree
//
//	service            backend registry, owner directory, mints SessionIDs
//	└── owner          sessions, pending spawns, dispose fence, retained failures
//	    └── session    one per id: the one-send slot, the close fence, status
//	        ├── probe  the exact tier's /proc observations (own goroutine)
//	        └── send   0 or 1: write, readiness tiers, settle exactly once
//	tasks              background sends (tasks.go): ids, output cursors, kill
//
// A session actor is also the pending spawn: it starts the backend, runs the
// startup wait as a send with nothing to write, and is published by its
// owner only once that settled and the owner's post-checks passed.
//
// # Readiness
//
// Backends report facts (output collected, a verified prompt marker, the
// shell's exit, stdin-wait observations on request); the send actor alone
// decides why a send settles: stdin_read (verified prompt with the shell in
// the foreground, or a kernel-proven wait on the terminal after the input
// was consumed and all output before it was parsed; a backend that cannot
// prove the latter offers an output barrier, messages.Syncer),
// inferred_idle (idleSilenceMs without output, plus handoffGraceMs when a
// marker was seen but the hand-back was not yet visible), timeout
// (timeoutMs after reservation) or session_exit.
//
// # Message-driven use
//
// Service.PID is the service actor. Any integration can send it the request
// messages of package messages (RegisterBackend, OpenOwner, Spawn,
// StartSend, AwaitSend, ReadSendOutput, CancelSend, Read, SignalSession,
// Kill, List, HasOwnerActivity, DisposeOwner) with Request or
// RequestFuture and receive the reply type each one documents. Lifecycle
// events (messages.Event*) are published on the actor system's
// EventStream; they never carry terminal bytes.
//
// # Supervision
//
//   - send: a panic stops the send actor (never restarted) and settles that
//     send with an error wrapping messages.ErrTransport; the session stays
//     usable. A read or cancel the send was handling is answered with the
//     same error.
//   - session: a panic stops the session actor (it owns processes, so it is
//     never restarted); its Stopping handler tears the process tree down and
//     reports to the owner, which counts the teardown as activity. The
//     request it was handling is answered by the owner with an error
//     wrapping messages.ErrTransport.
//   - probe: a panic in a prober is answered as an error observation; the
//     send falls back to silence and the deadline for that look.
//   - owner: a panic stops the owner; its sessions stop and tear down.
//
// Finished actors are retired with a poison pill, never Stop: Stop
// overtakes user messages already queued, and requests forwarded there
// would go unanswered.
//
// Blocking work (backend spawn, writes, interrupts, teardown) runs in
// goroutines the actor starts, which report back as messages; no actor
// blocks its mailbox. That is what allows every actor but the probe to run
// on protoactor's synchronized dispatcher: a mailbox runs in the goroutine
// that delivered the message, so the caller's goroutine carries a send to
// its write and the output pump carries a prompt to the settlement.
package actors
