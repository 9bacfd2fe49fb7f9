package wire

import (
	"context"
	"errors"
	"strings"

	"github.com/ptyactor/ptyactor/messages"
	"google.golang.org/protobuf/proto"
)

// codes maps each wire Code to the sentinel it stands for. A coded
// *messages.Error is rebuilt with its own message on decoding, so
// errors.As finds the host's text and errors.Is matches by code.
var codes = []struct {
	code     Code
	sentinel error
}{
	{Code_NO_SESSION, messages.ErrNoSession},
	{Code_OWNER_NOT_LIVE, messages.ErrOwnerNotLive},
	{Code_SEND_ACTIVE, messages.ErrSendActive},
	{Code_DUPLICATE_NAME, messages.ErrDuplicateName},
	{Code_NO_BACKEND, messages.ErrNoBackend},
	{Code_SERVICE_DISPOSING, messages.ErrServiceDisposing},
	{Code_DUPLICATE_BACKEND, messages.ErrDuplicateBackend},
	{Code_NO_HOST, messages.ErrNoHost},
	{Code_SESSION_LIMIT, messages.ErrSessionLimit},
	{Code_NO_RECORDING, messages.ErrNoRecording},
	{Code_CONTROL_HELD, messages.ErrControlHeld},
	{Code_CONTROL_STALE, messages.ErrControlStale},
	{Code_SECRET_PROMPT_GONE, messages.ErrSecretPromptGone},
	{Code_SESSION_CLOSING, messages.ErrSessionClosing},
	{Code_SESSION_EXITED, messages.ErrSessionExited},
	{Code_ABORTED_BEFORE_WRITE, messages.ErrAbortedBeforeWrite},
	{Code_NO_FOREGROUND, messages.ErrNoForeground},
	{Code_REFUSE_KILL_SHELL, messages.ErrRefuseKillShell},
	{Code_STARTUP_EXITED, messages.ErrStartupExited},
	{Code_STARTUP_TIMEOUT, messages.ErrStartupTimeout},
	{Code_CONFIG, messages.ErrConfig},
	{Code_INVALID_ARGUMENT, messages.ErrInvalidArgument},
	{Code_TRANSPORT, messages.ErrTransport},
	{Code_HOST_LOST, messages.ErrHostLost},
	{Code_CANCELED, context.Canceled},
	{Code_DEADLINE_EXCEEDED, context.DeadlineExceeded},
}

// ErrorTo encodes err with every class it matches; nil stays nil. An error
// that matches no class is sent as TRANSPORT: the caller still gets a
// typed error, and its text.
func ErrorTo(err error) *Error {
	if err == nil {
		return nil
	}
	w := &Error{Message: err.Error()}
	var ce *messages.CleanupError
	if errors.As(err, &ce) {
		w.Codes = append(w.Codes, Code_CLEANUP)
		w.CleanupReason = ce.Reason
		w.Survivors = ints64(ce.Survivors)
	}
	for _, c := range codes {
		if errors.Is(err, c.sentinel) {
			w.Codes = append(w.Codes, c.code)
		}
	}
	if len(w.Codes) == 0 {
		w.Codes = []Code{Code_TRANSPORT}
	}
	return w
}

// ErrorFrom decodes an error: its text is the host's, and errors.Is
// matches every class the host's error matched (errors.As finds a
// *messages.CleanupError or a coded *messages.Error). nil stays nil.
func ErrorFrom(w *Error) error {
	if w == nil {
		return nil
	}
	e := &remoteError{msg: w.Message}
	for _, code := range w.Codes {
		if code == Code_CLEANUP {
			e.is = append(e.is, &messages.CleanupError{Reason: w.CleanupReason, Survivors: ints(w.Survivors), Err: errors.New(w.Message)})
			continue
		}
		for _, c := range codes {
			if c.code != code {
				continue
			}
			if me, ok := c.sentinel.(*messages.Error); ok {
				e.is = append(e.is, messages.Errorf(me.Code, "%s", w.Message))
			} else {
				e.is = append(e.is, c.sentinel)
			}
		}
	}
	if len(e.is) == 0 {
		// A code this client does not know (a newer host): still typed.
		e.is = append(e.is, messages.ErrTransport)
	}
	return e
}

// Renamed returns w with the session the host calls hostID named clientID
// in its text instead: a host's errors name its sessions by its own ids,
// which a client's caller never saw. The codes are kept, so the decoded
// error matches the same classes. w itself is not changed.
func Renamed(w *Error, hostID, clientID string) *Error {
	if w == nil || hostID == "" || !strings.Contains(w.Message, hostID) {
		return w
	}
	r := proto.Clone(w).(*Error)
	r.Message = strings.ReplaceAll(r.Message, hostID, clientID)
	return r
}

// remoteError is an error that happened on the host: the host's text,
// matching each class the host's error matched.
type remoteError struct {
	msg string
	is  []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.is }
