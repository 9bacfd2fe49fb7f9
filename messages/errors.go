package messages

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Code classifies a service refusal.
type Code string

const (
	CodeDuplicateBackend Code = "DUPLICATE_BACKEND"
	CodeDuplicateName    Code = "DUPLICATE_NAME"
	CodeNoBackend        Code = "NO_BACKEND"
	CodeNoHost           Code = "NO_HOST"
	CodeNoRecording      Code = "NO_RECORDING"
	CodeSessionLimit     Code = "SESSION_LIMIT"
	CodeNoSession        Code = "NO_SESSION"
	CodeOwnerNotLive     Code = "OWNER_NOT_LIVE"
	CodeSendActive       Code = "SEND_ACTIVE"
	CodeServiceDisposing Code = "SERVICE_DISPOSING"
	CodeControlHeld      Code = "CONTROL_HELD"
	CodeControlStale     Code = "CONTROL_STALE"
)

// Error is a service refusal with a code. errors.Is matches any *Error with
// the same code, so callers compare against the sentinels below.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is matches another *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is. The service returns *Error values with specific
// messages; they match these by code.
var (
	ErrDuplicateBackend = &Error{CodeDuplicateBackend, "backend already registered"}
	ErrDuplicateName    = &Error{CodeDuplicateName, "session name already in use"}
	ErrNoBackend        = &Error{CodeNoBackend, "no such backend"}
	ErrNoHost           = &Error{CodeNoHost, "no such PTY host, or none live"}
	// ErrNoRecording: a host has no record of that session to give this
	// client: the session was not closed there for it (another client's,
	// an unknown id), the host forgot it (it keeps a bounded few, for a
	// while), or it wrote none.
	ErrNoRecording = &Error{CodeNoRecording, "no recording of that session for this client"}
	// ErrSessionLimit: a host refuses a spawn beyond its sessions per
	// client (ptyhost -max-sessions-per-client); ptymcp's refusals beyond
	// -max-terminals and -http-max-sessions wrap it too.
	ErrSessionLimit     = &Error{CodeSessionLimit, "the host's limit of sessions per client is reached"}
	ErrNoSession        = &Error{CodeNoSession, "unknown PTY session"}
	ErrOwnerNotLive     = &Error{CodeOwnerNotLive, "owner is not live"}
	ErrSendActive       = &Error{CodeSendActive, "a send is already active on this session"}
	ErrServiceDisposing = &Error{CodeServiceDisposing, "PTY service is disposing"}
	// ErrControlHeld: a person holds the session's input (Control); the
	// agent's sends, keys, resizes, signals and close are refused until
	// they hand it back. Reads and waits work.
	ErrControlHeld = &Error{CodeControlHeld, "a person holds this session's input"}
	// ErrControlStale: input or a hand-back from a holder whose control
	// moved on (an old page, a hold taken by someone else, or returned).
	ErrControlStale = &Error{CodeControlStale, "control of this session moved on"}
)

// Errorf builds a coded error with a specific message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// NoSession is the answer for an unknown id and, deliberately, for another
// owner's id: there is no existence oracle.
func NoSession(id SessionID) *Error {
	return Errorf(CodeNoSession, "unknown PTY session %s", id)
}

// Session state and backend errors.
var (
	ErrSessionClosing = errors.New("PTY session is closing")
	ErrSessionExited  = errors.New("PTY session has exited")
	// ErrAbortedBeforeWrite: the send was cancelled before its input was
	// written; nothing reached the terminal.
	ErrAbortedBeforeWrite = errors.New("PTY send aborted before write")
	// ErrNoForeground: the terminal's foreground process group could not be
	// resolved, or names a group that has already exited; nothing was
	// signalled.
	ErrNoForeground = errors.New("cannot resolve foreground process group")
	// ErrRefuseKillShell: SIGKILL aimed at the shell's own group.
	ErrRefuseKillShell = errors.New("refusing to SIGKILL the terminal shell; close the session instead")
	// ErrStartupExited: the shell exited before it was ready.
	ErrStartupExited = errors.New("PTY shell exited during startup")
	// ErrStartupTimeout: the shell produced no ready prompt before the deadline.
	ErrStartupTimeout = errors.New("PTY shell did not reach readiness before startup timeout")
	// ErrInvalidArgument wraps every malformed request (empty name, bad paging
	// values, unknown signal, ...).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrConfig matches every *ConfigError: an invalid configuration field,
	// of the runtime (Config.Validate) or of a layer built on it
	// (tools.Options).
	ErrConfig = errors.New("invalid configuration")
	// ErrTransport: the backend failed to write or signal; the send is rejected.
	ErrTransport = errors.New("PTY transport failure")
	// ErrHostLost: the remote host serving the session stopped answering
	// (killed, stopped, or cut off). Every operation pending on its
	// sessions fails with it, and its sessions report exited.
	ErrHostLost = errors.New("PTY host lost")
)

// InvalidArgument wraps ErrInvalidArgument with a specific message.
func InvalidArgument(format string, args ...any) error {
	return &argError{msg: fmt.Sprintf(format, args...)}
}

type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }
func (e *argError) Unwrap() error { return ErrInvalidArgument }

// CleanupError reports a close that did not leave the process tree quiet.
// It is never cached: a later close retries.
type CleanupError struct {
	Reason    string // why the session was being closed
	Survivors []int  // pids still alive
	Err       error  // underlying cause, if any
}

func (e *CleanupError) Error() string {
	var b strings.Builder
	b.WriteString("PTY cleanup failed (")
	b.WriteString(e.Reason)
	b.WriteString(")")
	if len(e.Survivors) > 0 {
		b.WriteString("; surviving pids: ")
		for i, p := range e.Survivors {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *CleanupError) Unwrap() error { return e.Err }

// BackendCleanupError reports a failed start whose cleanup also failed. It
// keeps both: errors.Is/As answer for the start error and for the cleanup
// error, and the start error (often the caller's cancellation cause) is not
// replaced.
type BackendCleanupError struct {
	SpawnErr   error
	CleanupErr error
}

func (e *BackendCleanupError) Error() string {
	return fmt.Sprintf("PTY start failed (%v) and cleanup failed (%v)", e.SpawnErr, e.CleanupErr)
}

func (e *BackendCleanupError) Unwrap() []error { return []error{e.SpawnErr, e.CleanupErr} }

// ConfigError reports an invalid configuration field. It matches ErrConfig
// and, being a malformed request, wraps ErrInvalidArgument.
type ConfigError struct {
	Field string // the field's name as the configuration spells it, e.g. "timeoutMs"
	Msg   string // what is wrong with it, e.g. "must be positive"
}

func (e *ConfigError) Error() string { return "ptyactor: " + e.Field + " " + e.Msg }

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func (e *ConfigError) Unwrap() error { return ErrInvalidArgument }
