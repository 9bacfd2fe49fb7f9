// Package darwin reads the foreground process group and its members on
// macOS from ps(1). macOS has no exact stdin-wait tier: these facts serve
// the signal path and teardown, while readiness falls back to the prompt
// marker, silence and the deadline. Parsing is pure, so it is tested on every
// OS; only ExecRunner needs macOS.
package darwin
