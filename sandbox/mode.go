package sandbox

import "fmt"

// Mode is how much of the host a shell may touch.
type Mode string

const (
	// ReadOnly: no write to any host path; a private tmpfs on /tmp.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite: writes only under the workspace root (plus the
	// private /tmp); the root's .git stays read-only unless configured.
	WorkspaceWrite Mode = "workspace-write"
	// DangerFullAccess: no sandbox; the shell is started directly.
	DangerFullAccess Mode = "danger-full-access"
)

// Modes lists the modes from the most to the least restricted.
var Modes = []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess}

// ParseMode returns the mode named s (its JSON name, e.g. "read-only").
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%w: unknown sandbox mode %q (one of read-only, workspace-write, danger-full-access)", ErrInvalid, s)
}

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool {
	_, err := ParseMode(string(m))
	return err == nil
}

// Restricted reports whether m needs a sandbox provider.
func (m Mode) Restricted() bool { return m == ReadOnly || m == WorkspaceWrite }

func (m Mode) String() string { return string(m) }
