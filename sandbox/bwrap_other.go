//go:build !linux

package sandbox

// Wrap fails: bubblewrap needs Linux namespaces.
func (b *Bubblewrap) Wrap(argv []string, r Resolution, cwd string) (*Command, error) {
	return nil, &UnavailableError{Mode: r.Mode, Reason: "bubblewrap is Linux-only"}
}
