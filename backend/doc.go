// Package backend is the contract between the ptyactor runtime and the
// terminals it drives: the one page a backend author reads.
//
// A Backend starts Sessions of one type. A Session is one live terminal: it
// writes input, pumps and parses output, pages scrollback, signals the
// foreground group and tears its process tree down. It reports facts
// through Events (output collected, a verified prompt marker, exit, an
// output barrier passed) and never decides anything: the actors in package
// actors alone decide when a send settles and why, the same way for every
// backend.
//
// Optional capabilities are separate interfaces a Session may implement:
//
//   - TryWriter: a write that never blocks, so small input is written inline.
//   - StdinProber: the exact tier, an observation from the kernel of whether
//     the foreground program is blocked reading the terminal.
//   - Syncer: an output barrier, for a backend whose observation cannot
//     prove that every byte written before it was parsed.
//
// Implementations: backend/local (bash in a creack/pty PTY) and
// backend/faulty (a scripted fake for fault injection). A backend imports
// messages (plain data) and this package, never the runtime.
//
// # Calling conventions
//
// The runtime calls Session methods from actor mailboxes, so every method
// except Write, Signal and Close must return promptly (it reads memory or
// process state; it never waits on the program). Write, Signal and Close
// run in goroutines the actors own and take the time they need; a context,
// where there is one, bounds it. Events methods are called from the
// backend's output pump and must never block.
package backend
