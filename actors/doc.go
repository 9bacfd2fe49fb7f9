// Package actors is the ptyactor runtime: the service, owner, session,
// facts and send actors, the tasks registry, their supervision, and the Go
// facade (Service and the *Session handle) whose context-aware methods send
// protocol messages and await replies.
//
// # The tree
//
//	service            backend registry, owner directory, mints SessionIDs
//	└── owner          sessions, pending spawns, dispose fence, retained failures
//	    └── session    one per id: the one-send slot, the close fence, status
//	        ├── facts  the session's newest facts (output, prompt, exit, looks);
//	        │          runs the exact tier's looks; sends subscribe to it
//	        └── send   0 or 1: begin, write, readiness tiers, settle exactly once
//	tasks              background sends (tasks.go): ids, output cursors, kill
//
// A session actor is also the pending spawn: it starts the backend, runs the
// startup wait as a send with nothing to write, and is published by its
// owner only once that settled and the owner's post-checks passed.
//
// # Readiness
//
// Backends report facts (output collected for an epoch, a verified prompt
// marker, the shell's exit, stdin-wait observations on request) to the
// session's facts actor, which keeps the newest of each and passes them to
// the send that subscribed; the send actor alone decides why a send
// settles: stdin_read (verified prompt with the shell in the foreground,
// which suffices alone only where no exact tier exists, else the exact tier
// must confirm the shell itself waits on the terminal, since a program of
// the same user can read the nonce and print the marker; or a
// kernel-proven wait on the terminal after the input was consumed and all
// output before it was parsed; a backend that cannot prove the latter
// offers an output barrier, backend.Syncer),
// inferred_idle (idleSilenceMs without output, plus handoffGraceMs when a
// marker was seen but the hand-back was not yet visible), timeout
// (timeoutMs after reservation) or session_exit.
//
// # Message-driven use
//
// Service.PID is the service actor. Any integration can send it the request
// messages of package actors/protocol (backends, owners, spawns, sends, reads, signals,
// screens and sizes, kills, lists, disposal) with Request or RequestFuture
// and receive the reply type each one documents (docs/go-api.md lists them
// all). Lifecycle events (Event*) are published on the actor system's
// EventStream; they never carry terminal bytes.
//
// # Supervision
//
// What happens when an actor fails (panics) on a message, who decides, and
// what the caller sees. Each path has a fault test (backend/faulty, or
// supervision_test.go with an injected panic); none restarts an actor.
//
//   - service (supervised by a resuming guardian, resumeStrategy): resumes
//     with the next message; owners, sessions and processes are untouched.
//     The failed request's sender gets an error wrapping ErrTransport.
//     Test: TestSupervisionServiceResumes. (protoactor's default would
//     restart it, stopping every owner and every terminal.)
//   - tasks (the same guardian): resumes; tasks are kept; the failed
//     request is answered with ErrTransport. Test: TestSupervisionTasksResumes.
//   - owner (supervised by the service): stopped, never restarted; its
//     sessions stop and tear their trees down; the owner is forgotten, so
//     later requests are answered as for an unknown owner (Spawn:
//     OWNER_NOT_LIVE); the request it was handling is answered with
//     ErrTransport. Other owners are untouched. Test: TestSupervisionOwnerStops.
//   - session (supervised by its owner): stopped, never restarted (it owns
//     processes); its Stopping handler tears the tree down and reports to
//     the owner, which counts a failed teardown as retained activity; the
//     request it was handling is answered by the owner with ErrTransport.
//     Tests: backend/faulty TestReadPanics, TestOrphanTeardownFailureIsRetained.
//   - send (supervised by its session): stopped, never restarted; the send
//     settles with an error wrapping ErrTransport and the session stays
//     usable; a read or cancel it was handling is answered by the session.
//     The send's own backend calls (its inline write, its reads of the
//     output) fail only the send. Tests:
//     TestSendPanicSettlesWithErrorAndSessionStaysUsable, backend/faulty
//     TestTakeOutputPanics, TestTryWritePanics.
//   - facts (supervised by its session): resumed, its newest facts kept.
//     A panic in a prober is recovered and answered as an error
//     observation; the send falls back to silence and the deadline for that
//     look. Looks run in the goroutine that asked (the pump after output, a
//     timer), except a send's first look, which would run in the caller's
//     goroutine and gets its own: a prober stuck in the kernel never holds
//     a caller, and looks are one at a time, so it stalls only the exact
//     tier. Tests: backend/faulty TestProbeFaults, TestProbeHangs. (A look
//     stuck on the pump would also stall that session's output until its
//     close; for the local backend that takes a process that cannot be
//     killed either.)
//
// Nothing escalates: every failure is decided by the failed actor's parent
// (or the guardian) as above, so one bad message or backend call never
// reaches past its own owner.
//
// Finished actors are retired with a poison pill, never Stop: Stop
// overtakes user messages already queued, and requests forwarded there
// would go unanswered.
//
// Blocking work (backend spawn, writes, interrupts, teardown) runs in
// goroutines the actor starts, which report back as messages; no actor
// blocks its mailbox. That is what allows every actor to run on
// protoactor's synchronized dispatcher: a mailbox runs in the goroutine
// that delivered the message, so the caller's goroutine carries a send to
// its write and the output pump carries a prompt to the settlement.
package actors
