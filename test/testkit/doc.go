// Package testkit holds the helpers every test package of ptyactor shares:
// a per-call watchdog context, a bounded poll for a condition, and the
// runtime configurations tests run with.
package testkit
