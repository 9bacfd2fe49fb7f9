package sandbox

import (
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

var (
	// ErrChangeRefused is matched by every *ChangeRefusedError.
	ErrChangeRefused = errors.New("sandbox: change refused while the owner has open or pending terminal sessions")
	// ErrUnavailable is matched by every *UnavailableError: a restricted
	// mode was asked for and nothing can enforce it.
	ErrUnavailable = errors.New("sandbox: no sandbox provider available")
	// ErrInvalid reports a bad mode, root or working directory. It wraps
	// messages.ErrInvalidArgument, so callers that sort refusals by the
	// runtime's sentinels see a spawn with such a setting as a bad request.
	ErrInvalid = fmt.Errorf("sandbox: invalid setting: %w", messages.ErrInvalidArgument)
)

// ChangeRefusedError is a SetMode (or SetNetwork) refused by the fence: the
// owner has a terminal open or being created, and the change would alter
// what that terminal was started with. Nothing changed.
type ChangeRefusedError struct {
	// Setting is what the caller tried to change: "mode" or "network
	// access".
	Setting string
	// From and To are the effective values before and after the refused
	// change.
	From, To string
	// Sessions is how many sessions of the owner were open or pending.
	Sessions int
}

func (e *ChangeRefusedError) Error() string {
	return fmt.Sprintf("cannot change sandbox %s from %q to %q while persistent terminal sessions are open or being created; wait for creation to settle and close them first",
		e.Setting, e.From, e.To)
}

// Is matches ErrChangeRefused.
func (e *ChangeRefusedError) Is(target error) bool { return target == ErrChangeRefused }

// UnavailableError says why a restricted mode cannot be enforced here. The
// spawn that met it started no process.
type UnavailableError struct {
	Mode   Mode
	Reason string // e.g. "no sandbox provider is mounted", "bwrap not found in $PATH"
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("sandbox mode %q cannot be enforced: %s; on Linux install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and mount the provider (local.Options.Sandbox = sandbox.NewBubblewrap(...)), or use danger-full-access",
		e.Mode, e.Reason)
}

// Is matches ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }
