package main

import (
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/sandbox"
)

// confine gives the backend the deployment's sandbox: one policy (mode,
// workspace root, network) for every owner, and for the restricted modes the
// bubblewrap provider. Without bwrap on the machine a restricted spawn fails
// before any process starts, with an error naming the package to install;
// the server keeps serving, and installing bubblewrap takes effect at the
// next open.
func confine(c config, o *local.Options) error {
	mode, err := sandbox.ParseMode(c.sandbox)
	if err != nil {
		return err
	}
	policy, err := sandbox.NewPolicy(sandbox.Settings{Mode: mode, Root: c.workspace, Network: c.allowNetwork})
	if err != nil {
		return err
	}
	o.Policy = policy
	if mode.Restricted() {
		o.Sandbox = sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})
	}
	return nil
}
