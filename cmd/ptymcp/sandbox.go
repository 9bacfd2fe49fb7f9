package main

import (
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/backend/local"
)

// errSandboxUnavailable: a restricted mode was asked for and no sandbox
// provider is wired into this build.
var errSandboxUnavailable = errors.New("sandbox provider unavailable")

// confine applies the sandbox mode to the backend options.
//
// MERGE SEAM: the sandbox package (bubblewrap provider, policy, mode fence)
// is built on another branch. Connect it here: for read-only and
// workspace-write, wrap the shell argv once with the provider (workspace
// c.workspace writable only in workspace-write, network per
// c.allowNetwork), and fail before spawning when no provider is mounted.
// Until then restricted modes refuse to start rather than run unconfined.
func confine(c config, o *local.Options) error {
	if c.sandbox == modeFullAccess {
		return nil
	}
	return fmt.Errorf("%w: -sandbox %s needs the sandbox provider, which this build does not include; run with -sandbox danger-full-access to use the terminals unconfined", errSandboxUnavailable, c.sandbox)
}
