// Package leakcheck is the old name of test/testkit's leak check, kept
// only for the test files another change moves at the same time
// (cmd/ptymcp's, view/assets/page_test.go): every other test imports
// test/testkit. Delete it once they do.
package leakcheck

import "github.com/ptyactor/ptyactor/test/testkit"

// Checker is testkit.LeakChecker.
type Checker = testkit.LeakChecker

// Main is testkit.Main.
var Main = testkit.Main
