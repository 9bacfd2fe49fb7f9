// Package darwin reads the process table on macOS: through sysctl
// kern.proc (ReadKinfo, ListKinfo), whose start times have microseconds, for
// teardown; and through ps(1) (Snapshot), for the foreground process group
// and its members. macOS has no exact stdin-wait tier: these facts serve the
// signal path and teardown, while readiness falls back to the prompt marker,
// silence and the deadline. Parsing and decoding are pure, so they are
// tested on every OS; only the sysctl and ps calls need macOS.
package darwin
