//go:build linux && !amd64 && !arm64

package sandbox

// seccompABIs: the filter is defined for amd64 and arm64 only; elsewhere
// the restricted modes refuse to start.
func seccompABIs() (native, compat seccompABI, x32Bit uint32, ok bool) {
	return seccompABI{}, seccompABI{}, 0, false
}
