package teardown

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var (
	// ErrGone reports that a process is already gone, or that its pid now
	// belongs to another process. For teardown that is success, not failure.
	ErrGone = errors.New("teardown: process is gone")

	// ErrRootChanged reports that the root pid no longer has the start
	// identity it was captured with: it exited and was reaped, or its pid
	// was recycled. Nothing is adopted from a root that changed, because
	// its pid may now name an unrelated process and session.
	ErrRootChanged = errors.New("teardown: root process is gone or its pid was reused")

	// ErrSurvivors is matched by errors.Is for every *SurvivorsError.
	ErrSurvivors = errors.New("teardown: processes survived SIGKILL")

	// ErrUnsupported is returned on platforms other than Linux and macOS,
	// whose process tables teardown cannot read, and by the Linux-only
	// subreaper functions on macOS.
	ErrUnsupported = errors.New("teardown: unsupported on this platform")

	// ErrInvalidPID reports a pid that must never be signalled: zero or
	// negative pids address process groups or every process.
	ErrInvalidPID = errors.New("teardown: invalid pid")
)

// SurvivorsError reports a tree that was not quiet after SIGKILL and the
// grace period. The caller must not treat the session as closed; a later
// Tree call retries.
type SurvivorsError struct {
	// Survivors are the pids still running (not zombies), children first.
	Survivors []int
	// Err explains why, when known: signals that failed or rescans that
	// could not be completed. It may be nil.
	Err error
}

func (e *SurvivorsError) Error() string {
	pids := make([]string, len(e.Survivors))
	for i, p := range e.Survivors {
		pids[i] = strconv.Itoa(p)
	}
	msg := fmt.Sprintf("teardown: %d process(es) survived SIGKILL: %s", len(e.Survivors), strings.Join(pids, ", "))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause, if any.
func (e *SurvivorsError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrSurvivors) true for any *SurvivorsError.
func (e *SurvivorsError) Is(target error) bool { return target == ErrSurvivors }
