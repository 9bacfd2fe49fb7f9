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
package messages
