// Package teardown kills the process tree under a session's shell and proves
// it is quiet.
//
// Tree follows the teardown contract (SPEC §9): capture the shell's
// descendants children-first, each with its start identity; SIGTERM them;
// wait; rescan for processes forked meanwhile; SIGKILL the union; verify that
// nothing captured is still running. It never signals the shell itself (its
// owner stops and reaps it), never signals a whole POSIX session or process
// group, and never signals a pid whose start identity has changed, so a
// recycled pid is never hit.
//
// # Membership
//
// A process belongs to the tree when it descends from the root by parent pid,
// or when it is a member of the root's own session (session id == root pid)
// together with its descendants. The session rule catches jobs that
// double-forked and re-parented to init or a subreaper before teardown. A
// daemon that both re-parented away and left the session (setsid) before
// teardown is not found; that escape is documented, not a bug.
//
// The escape closes when the host opts in: after BecomeSubreaper, orphans
// re-parent to the host instead of init, and Options.AdoptTag names an
// environment entry unique to the session. Tree then also takes the host's
// children that carry that entry, with their descendants. A child of the
// host is taken only on that positive proof, so a process of another
// session, or one the host started itself, is never signalled. Members that
// end as zombie children of the host are reaped one pid at a time.
//
// # Platform support
//
// Tree, ProcSignaler and Identify read the host's process table: /proc on
// Linux; on macOS, sysctl kern.proc through probes/darwin, with session ids
// from getsid(2). A start identity (linux.Identity) holds the process's start
// in the host's unit: clock ticks after boot on Linux, microseconds since the
// Unix epoch on macOS, precise enough to tell a recycled pid (ps's lstart has
// whole seconds). Linux signals through pidfds; macOS, which has none,
// re-checks the identity right before kill(2), leaving a window of two
// system calls in which a reaped and reused pid would be hit. Adoption
// (BecomeSubreaper, Options.AdoptTag) and reaping are Linux-only. Other
// platforms get ErrUnsupported. Capture and Descendants are pure functions
// over a linux.ProcReader and work on any platform.
package teardown
