// Package linux reads process-table facts from Linux procfs.
//
// Every function takes a ProcReader instead of touching /proc directly, so the
// parsing and the process-table walks can be tested against fixtures; FS is
// the reader for the real /proc. The package holds no state and starts no
// goroutines.
package linux
