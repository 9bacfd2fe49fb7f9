// Package browser is the old name of test/testkit's browser fixture, kept
// only for the test files another change moves at the same time
// (cmd/ptymcp's, view/assets/page_test.go): every other test imports
// test/testkit. Delete it once they do.
package browser

import "github.com/ptyactor/ptyactor/test/testkit"

// Browser is testkit.Browser.
type Browser = testkit.Browser

// New is testkit.NewBrowser.
var New = testkit.NewBrowser
