// Package messages is the vocabulary of ptyactor: session ids, owners, wait
// reasons, session status, signals, requests and results, configuration and
// typed errors. The backend contract is in package backend; the service
// actor's request/reply protocol is in package actors, beside the actors
// that speak it.
//
// It is plain data. Nothing here starts a goroutine or performs I/O, so every
// other package (actors, backends, tools, transports) can depend on it without
// depending on each other.
//
// # Errors
//
// Service refusals are *Error values carrying a Code; compare them with
// errors.Is against the sentinels (ErrNoSession, ErrSendActive, ...). Session
// state errors (ErrSessionClosing, ErrSessionExited) and cleanup failures
// (*CleanupError, *BackendCleanupError) are separate types so callers can tell
// "you asked for something impossible" from "the runtime failed to clean up".
//
// A malformed request wraps ErrInvalidArgument, whichever layer refused it
// (a tool's argument check, the runtime's); an invalid configuration is a
// *ConfigError, which matches ErrConfig and wraps ErrInvalidArgument. Each
// check of a request has one home here, applied by the runtime:
// ReadRequest.Resolve for paging, ParseSignal for signal names, and
// Config.Validate.
package messages
