//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// infoTimeout bounds the wait for bwrap's report when ctx has no deadline.
// bwrap writes it right after cloning the sandbox, so this only guards
// against a wrapper that hangs before.
const infoTimeout = 30 * time.Second

// Wrap returns the bwrap command line for argv. It fails with
// *UnavailableError when bwrap is not installed.
func (b *Bubblewrap) Wrap(argv []string, r Resolution, cwd string) (_ *Command, err error) {
	path, err := exec.LookPath(b.path)
	if err != nil {
		return nil, &UnavailableError{Mode: r.Mode, Reason: fmt.Sprintf("bubblewrap (%s) not found: %v", b.path, err)}
	}
	// bwrap would fail on a missing root only inside the new sandbox,
	// where its message ends up in the terminal, not in an error: check
	// first.
	if fi, err := os.Stat(r.Root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: workspace root %q is not a directory (%v)", ErrInvalid, r.Root, err)
	}
	if cwd == "" {
		cwd = r.Root
	}
	dir, err := sandboxCwd(r, cwd)
	if err != nil {
		return nil, err
	}
	native, compat, x32Bit, ok := seccompABIs()
	if !ok {
		return nil, &UnavailableError{Mode: r.Mode, Reason: "the seccomp filter that refuses TIOCSTI is defined for amd64 and arm64 only, not " + runtime.GOARCH}
	}
	filter, err := seccompFile(seccompProgram(native, compat, x32Bit))
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		_ = filter.Close()
		return nil, fmt.Errorf("sandbox: info pipe: %w", err)
	}
	const infoFD, seccompFD = 3, 4 // ExtraFiles[0], [1]
	argvOut := append([]string{path}, bwrapArgs(r, dir, readOnlyUnderRoot(r), hideNow(b.hide), infoFD, seccompFD)...)
	argvOut = append(argvOut, argv...)
	return &Command{
		Argv:       argvOut,
		ExtraFiles: []*os.File{pw, filter},
		ShellPID: func(ctx context.Context, root int) (int, error) {
			// Our copy of the write end must be gone, or a bwrap that
			// dies before reporting never produces end of file.
			_ = pw.Close()
			return readChildPID(ctx, pr)
		},
		Cleanup: func() {
			_ = pw.Close()
			_ = pr.Close()
			_ = filter.Close()
		},
	}, nil
}

// readChildPID reads bwrap's --info-fd report: one JSON object whose
// "child-pid" is the sandboxed command's pid in the host's pid namespace
// (with --as-pid-1, the shell itself).
func readChildPID(ctx context.Context, r *os.File) (int, error) {
	deadline := time.Now().Add(infoTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = r.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	err := json.NewDecoder(r).Decode(&info)
	switch {
	case ctx.Err() != nil:
		return 0, context.Cause(ctx)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return 0, errors.New("sandbox: bwrap exited before starting the shell")
	case err != nil:
		return 0, fmt.Errorf("sandbox: read bwrap's report: %w", err)
	case info.ChildPID <= 0:
		return 0, fmt.Errorf("sandbox: bwrap reported child pid %d", info.ChildPID)
	}
	return info.ChildPID, nil
}
