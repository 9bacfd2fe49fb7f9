package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/view"
	"github.com/rs/zerolog"
)

// Defaults of Options.
const (
	DefaultMaxResultBytes = 262144
	// MinMaxResultBytes is the smallest accepted MaxResultBytes: below it a
	// result could not hold its metadata and the truncation marker.
	MinMaxResultBytes     = 64
	DefaultWaitTimeout    = 30 * time.Second
	DefaultMaxWaitTimeout = 600 * time.Second
	// DefaultMaxTextBytes bounds terminal_send's text: a terminal consumes
	// input at the speed of the program's line editor, so a multi-megabyte
	// paste would outlive the send's deadline and keep the slot draining.
	DefaultMaxTextBytes = 262144
)

// Options configures a Toolset. Zero fields take their defaults.
type Options struct {
	// MaxResultBytes bounds every text result (default 262144, at least
	// 64). It is also each background task's output buffer.
	MaxResultBytes int
	// DisableRunInBackground is the inverse of the original's
	// enableRunInBackground (default true): when set, terminal_send has no
	// runInBackground parameter, rejects it when passed anyway, and the
	// task tools are not defined.
	DisableRunInBackground bool
	// WaitTimeout is task_output's default wait (30 s); MaxWaitTimeout caps
	// any requested wait (600 s). A default above the cap is rejected.
	WaitTimeout    time.Duration
	MaxWaitTimeout time.Duration
	// MaxTextBytes bounds terminal_send's text (default 262144).
	MaxTextBytes int
	// DefaultCwd is the working directory of a terminal opened without
	// cwd, and the base of a relative cwd; empty leaves both to the
	// backend.
	DefaultCwd string
	// DefaultHost places terminals on remote hosts (a host name, or
	// messages.AnyHost for the least busy); empty keeps them local.
	// DefaultCwd then does not apply: a path of this machine means nothing
	// on a host, whose own workspace is the default.
	DefaultHost string
	// RefuseSecretInput refuses terminal_send text while the session's
	// newest send settled at a secret prompt (a password read with echo
	// off): the model must ask its user to type the secret instead.
	RefuseSecretInput bool
	// SecretLink, when set, makes a link for a person to type the secret
	// a send's or wait's result waits for (its SecretPrompt) straight into
	// the terminal: the result's secretUrl, which the model is told to
	// give its user. The link must not be usable by the model itself
	// (ptymcp's needs the person's console login: view.Secrets.Mint with
	// standalone false). An error leaves the result without a link.
	SecretLink func(owner messages.Owner, p messages.SecretPrompt) (url string, err error)
	// Log receives one line per failed call; zero means none.
	Log zerolog.Logger
	// FetchRecording, when set, brings a closed session's record here
	// before terminal_close answers (ptymcp -host with its record folder
	// on: the file is on the host) and returns the copy's path, which
	// the result's recording.path then names (hostPath keeps the host's).
	// Its error is the result's recording.fetchError: the close itself
	// succeeded. It bounds its own time.
	FetchRecording func(ctx context.Context, session messages.SessionID, rec messages.Recording) (path string, err error)
	// Sharing, when set, defines terminal_share and terminal_unshare:
	// view-only links to a session's live view (package view).
	Sharing *Sharing
}

// Sharing is where share links are kept and served.
type Sharing struct {
	Links *view.Links
	// BaseURL is the console's address (scheme://host:port), which the
	// links start with.
	BaseURL string
}

// ErrConfig is messages.ErrConfig: New reports invalid Options as a
// *messages.ConfigError, the runtime's configuration error, which matches
// it (and messages.ErrInvalidArgument) with errors.Is.
var ErrConfig = messages.ErrConfig

func (o Options) withDefaults() (Options, error) {
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxResultBytes < MinMaxResultBytes || o.MaxResultBytes > messages.MaxSafeInteger {
		return o, &messages.ConfigError{Field: "maxResultBytes", Msg: fmt.Sprintf("must be a safe integer of at least %d", MinMaxResultBytes)}
	}
	if o.WaitTimeout == 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	if o.Sharing != nil && (o.Sharing.Links == nil || o.Sharing.BaseURL == "") {
		return o, &messages.ConfigError{Field: "sharing", Msg: "needs Links and BaseURL"}
	}
	if o.MaxWaitTimeout == 0 {
		o.MaxWaitTimeout = DefaultMaxWaitTimeout
	}
	if o.WaitTimeout < 0 || o.MaxWaitTimeout < 0 {
		return o, &messages.ConfigError{Field: "waitTimeoutMs", Msg: "must be positive"}
	}
	if o.WaitTimeout > o.MaxWaitTimeout {
		return o, &messages.ConfigError{Field: "waitTimeoutMs", Msg: fmt.Sprintf("(%d) must not exceed maxWaitTimeoutMs (%d)", o.WaitTimeout.Milliseconds(), o.MaxWaitTimeout.Milliseconds())}
	}
	if o.MaxTextBytes == 0 {
		o.MaxTextBytes = DefaultMaxTextBytes
	}
	if o.MaxTextBytes < 0 {
		return o, &messages.ConfigError{Field: "maxTextBytes", Msg: "must be positive"}
	}
	return o, nil
}
