//go:build !linux

package local

import linux "github.com/ptyactor/ptyactor/probes/linux"

// terminalPaths: other platforms have no exact tier.
func terminalPaths(*session) (linux.Terminal, error) { return linux.Terminal{}, nil }

func openSlave(linux.Terminal) int { return -1 }

func closeSlave(int) {}

type waiterCache struct{}

func newWaiterCache(linux.Terminal) *waiterCache { return &waiterCache{} }

func (*waiterCache) Close() {}
