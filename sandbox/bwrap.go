package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Bubblewrap is the Linux provider: a restricted shell runs under bwrap
// (https://github.com/containers/bubblewrap, Debian package bubblewrap,
// 0.8.0 or later for --disable-userns). On other platforms Wrap fails with
// *UnavailableError.
type Bubblewrap struct {
	path string
	hide []string
}

var _ Sandbox = (*Bubblewrap)(nil)

// BubblewrapOptions configures NewBubblewrap.
type BubblewrapOptions struct {
	// Path is the bwrap binary. Empty means "bwrap", looked up in $PATH at
	// every Wrap, so installing bubblewrap takes effect without a restart.
	Path string
	// Hide are host paths a sandboxed shell must not see at all, even
	// read-only: a folder (the records' folder, which holds every
	// session's record) is covered with an empty tmpfs, a file (a
	// credential: a token file, a TLS private key) with /dev/null, which
	// the sandbox cannot read. Each is looked at on every Wrap (hideNow):
	// one missing then is left out, so a folder must exist before the
	// first shell starts to be hidden from it (the commands create the
	// folders they hide).
	Hide []string
}

// NewBubblewrap returns the bubblewrap provider.
func NewBubblewrap(opts BubblewrapOptions) *Bubblewrap {
	if opts.Path == "" {
		opts.Path = "bwrap"
	}
	return &Bubblewrap{path: opts.Path, hide: slices.Clone(opts.Hide)}
}

// hiddenByBwrap are the host directories the sandbox replaces with its own
// (bwrapArgs mounts a fresh /dev, /proc and /tmp): a working directory
// there does not exist inside unless it is under the workspace root, which
// is bound on top.
var hiddenByBwrap = []string{"/tmp", "/dev", "/proc"}

// bwrapArgs returns bwrap's options for r, ending in "--", with the shell
// starting in cwd, bwrap writing the shell's host pid to infoFD and
// reading the seccomp filter from seccompFD. ro are
// paths under the root to keep read-only (an existing .git). It is pure, so
// the exact argv is tested on any platform.
//
// Why each option:
//   - --unshare-all: new user, ipc, pid, net, uts and cgroup namespaces; the
//     net namespace holds only a loopback, so no network.
//   - --share-net (only when r.Network): keep the host's network.
//   - --unshare-user --disable-userns: a user namespace for certain
//     (--unshare-all only tries one), which locks the read-only binds
//     against a remount, and the shell cannot create further user
//     namespaces to gain capabilities in.
//   - --cap-drop ALL: bwrap started by root keeps every capability in the
//     sandbox unless told otherwise. Measured with bwrap 0.8.0 as root:
//     under plain --unshare-all the shell can "mount -o remount,rw" the
//     read-only bind of / and write the host. Either this option or
//     --unshare-user stops that; both are kept.
//   - --die-with-parent: the sandbox is SIGKILLed if bwrap or its parent
//     (the host) dies, so a crashed host leaves no sandboxed orphans.
//   - --as-pid-1: the shell itself is pid 1 of its pid namespace (no bwrap
//     reaper in between). Every process of the sandbox then descends from
//     the shell by parent pid, even one that setsid()s and is orphaned, so
//     teardown finds them all from the shell; and when the shell exits the
//     kernel kills whatever is left in the namespace.
//   - no --new-session: it would detach the shell from the PTY (setsid), and
//     an interactive bash needs the PTY as controlling terminal for job
//     control, ^C and the foreground-group probes. The escape it guards
//     against, TIOCSTI (input pushed into the terminal), is refused by the
//     seccomp filter instead: the PTY is private to this one sandboxed
//     shell, but input pushed into it would still become the start of the
//     agent's next command (a "#" turns it into a comment that succeeds).
//   - --seccomp seccompFD: that filter (seccompProgram), which refuses the
//     ioctls TIOCSTI and TIOCLINUX with EPERM for the shell and everything
//     it starts.
//   - --ro-bind / /, then a private --dev /dev, --proc /proc (for the new
//     pid namespace) and --tmpfs /tmp.
//   - the root: --bind (WorkspaceWrite) or --ro-bind (ReadOnly, so a root
//     under /tmp stays visible), then --ro-bind over each path in ro.
//   - over each path in hide, last, so no bind above uncovers it: a
//     --tmpfs over a folder, a --ro-bind of /dev/null over a file (a
//     tmpfs cannot cover a file; the device on a mount made in the
//     sandbox's user namespace cannot even be opened: a read fails).
//   - --chdir cwd, --info-fd infoFD.
func bwrapArgs(r Resolution, cwd string, ro []string, hide []hidden, infoFD, seccompFD int) []string {
	a := []string{"--unshare-all"}
	if r.Network {
		a = append(a, "--share-net")
	}
	a = append(a,
		"--unshare-user", "--disable-userns",
		"--cap-drop", "ALL",
		"--die-with-parent",
		"--as-pid-1",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	)
	if r.Mode == WorkspaceWrite {
		a = append(a, "--bind", r.Root, r.Root)
	} else {
		a = append(a, "--ro-bind", r.Root, r.Root)
	}
	for _, p := range ro {
		a = append(a, "--ro-bind", p, p)
	}
	for _, h := range hide {
		if h.dir {
			a = append(a, "--tmpfs", h.path)
		} else {
			a = append(a, "--ro-bind", "/dev/null", h.path)
		}
	}
	return append(a, "--chdir", cwd, "--info-fd", strconv.Itoa(infoFD), "--seccomp", strconv.Itoa(seccompFD), "--")
}

// hidden is a path to hide as it is at a spawn: a folder or not.
type hidden struct {
	path string
	dir  bool
}

// hideNow is paths as the host has them now, the one place every hidden
// path passes before it reaches bwrap's argv: each resolved (the mount
// covers what a symbolic link leads to), once, and a path that does not
// exist left out. bwrap would have to make it, which fails in the
// read-only root ("Can't mkdir … Read-only file system": every spawn
// failed so), and there is nothing in it to hide yet.
func hideNow(paths []string) []hidden {
	var out []hidden
	seen := map[string]bool{}
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		real, err = filepath.Abs(real)
		if err != nil || seen[real] {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		seen[real] = true
		out = append(out, hidden{path: real, dir: fi.IsDir()})
	}
	return out
}

// readOnlyUnderRoot lists what stays read-only under a WorkspaceWrite
// root: its .git, when it exists now and the policy does not make it
// writable. A .git created later by the shell is writable.
func readOnlyUnderRoot(r Resolution) []string {
	if r.Mode != WorkspaceWrite || r.WritableGit {
		return nil
	}
	git := filepath.Join(r.Root, ".git")
	if _, err := os.Lstat(git); err != nil {
		return nil
	}
	return []string{git}
}

// sandboxCwd returns cwd absolute and free of links, and refuses one the
// sandbox would hide.
func sandboxCwd(r Resolution, cwd string) (string, error) {
	real, err := realDir("working directory", cwd)
	if err != nil {
		return "", err
	}
	if within(real, r.Root) {
		return real, nil
	}
	for _, h := range hiddenByBwrap {
		if within(real, h) {
			return "", fmt.Errorf("%w: working directory %q is under %s, which the sandbox replaces with its own; use a directory under the workspace root %q",
				ErrInvalid, cwd, h, r.Root)
		}
	}
	return real, nil
}
