// Package local is the creack/pty backend: it runs bash in a PTY with a
// scrubbed environment and a private, nonce-protected prompt marker, pumps
// and parses its output into bounded scrollback, writes input, resolves and
// signals the foreground group, reports readiness facts to the runtime, and
// tears the process tree down on close.
package local
