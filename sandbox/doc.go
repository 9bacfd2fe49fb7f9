// Package sandbox decides how much of the host a session's shell may touch,
// and confines it accordingly.
//
// # Modes
//
// Three modes, the ones agent terminals have settled on:
//
//   - ReadOnly: the shell may read the host but write no host path; it gets
//     a private, empty /tmp.
//   - WorkspaceWrite: as ReadOnly, and the workspace root is writable; a
//     .git under the root stays read-only unless the policy says otherwise.
//   - DangerFullAccess: no confinement at all; the shell runs directly.
//
// Both restricted modes also have no network unless the policy allows it
// (a separate flag), a private PID namespace, and die with their parent.
// A seccomp filter refuses, with EPERM, the ioctls that push input into
// the terminal (TIOCSTI, TIOCLINUX): the PTY is the sandbox's own, but
// injected input would become the start of the agent's next command.
//
// # Policy
//
// A Policy resolves, in one call per spawn, a session's effective mode and
// workspace root (which is also the default working directory). The owner's
// mode may be changed with SetMode, but never underneath an open terminal:
// while the owner holds a Lease (a session that is open or still being
// created) a change of its effective mode is refused with a
// *ChangeRefusedError. The fence lives in the Policy, not in a backend, so
// it survives a backend being unregistered and registered again.
//
// # Providers
//
// A Sandbox wraps the exact shell argv once. Bubblewrap is the Linux
// provider, on amd64 and arm64 (the architectures its seccomp filter is
// written for); elsewhere it reports ErrUnavailable. A restricted mode with no
// provider, or no bwrap binary, fails before any process starts, with an
// error that says what to install.
package sandbox
