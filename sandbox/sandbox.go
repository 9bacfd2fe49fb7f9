package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sandbox confines a shell. Implementations must be safe for concurrent
// use; Wrap starts nothing.
type Sandbox interface {
	// Wrap returns the command that runs argv confined as r says, with
	// cwd as its working directory inside the sandbox. It is called once
	// per spawn, only for a restricted mode. argv is the exact shell
	// command line and is kept verbatim at the end of the result. The
	// wrapped shell must stay in the started process's POSIX session with
	// the PTY as its controlling terminal (no setsid): job control, ^C
	// and the foreground-group probes depend on it, and the backend
	// refuses a shell it finds elsewhere.
	Wrap(argv []string, r Resolution, cwd string) (*Command, error)
}

// Command is what a backend starts in place of the shell.
type Command struct {
	// Argv is the program and its arguments.
	Argv []string
	// ExtraFiles become the child's fds 3, 4, ... (exec.Cmd.ExtraFiles).
	// The backend closes its copies as soon as the process started, so the
	// child's are the only ones left.
	ExtraFiles []*os.File
	// ShellPID, nil when the started process is the shell itself, finds
	// the host pid of the shell the wrapper started (root is the wrapper's
	// pid). It waits, at most until ctx is done, for the wrapper to tell,
	// and fails if the wrapper exited first.
	ShellPID func(ctx context.Context, root int) (int, error)
	// Cleanup, if set, releases what Wrap opened. The backend calls it once,
	// after ShellPID returned or when the start failed.
	Cleanup func()
}

// Shell returns the host pid of the shell: root itself for an unwrapped
// command, else what the wrapper reports.
func (c *Command) Shell(ctx context.Context, root int) (int, error) {
	if c.ShellPID == nil {
		return root, nil
	}
	return c.ShellPID(ctx, root)
}

// Wrapped reports whether the started process is a wrapper, not the shell.
func (c *Command) Wrapped() bool { return c.ShellPID != nil }

// Close runs Cleanup once.
func (c *Command) Close() {
	if c.Cleanup != nil {
		f := c.Cleanup
		c.Cleanup = nil
		f()
	}
}

// Confine returns the command that runs argv under r: argv itself for
// DangerFullAccess, sb's wrapper for a restricted mode. A restricted mode
// with sb nil fails with *UnavailableError before anything starts. cwd is
// the shell's working directory; empty means r.Root.
func Confine(sb Sandbox, argv []string, r Resolution, cwd string) (*Command, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: empty shell command line", ErrInvalid)
	}
	if cwd == "" {
		cwd = r.Root
	}
	switch {
	case !r.Mode.Valid():
		return nil, fmt.Errorf("%w: unknown sandbox mode %q", ErrInvalid, r.Mode)
	case !r.Mode.Restricted():
		return &Command{Argv: append([]string(nil), argv...)}, nil
	case sb == nil:
		return nil, &UnavailableError{Mode: r.Mode, Reason: "no sandbox provider is mounted"}
	}
	return sb.Wrap(argv, r, cwd)
}

// within reports whether path is dir or below it (both clean and absolute).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == "/"
}

// realDir returns path absolute and free of symbolic links. Its error wraps
// ErrInvalid and names path as what (e.g. "workspace root").
func realDir(what, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s %q: %w", ErrInvalid, what, path, err)
	}
	return abs, nil
}
