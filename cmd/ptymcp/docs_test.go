package main

import (
	"bytes"
	"errors"
	"flag"
	"testing"

	"github.com/ptyactor/ptyactor/docs"
)

// TestFlagTables holds docs/mcp.md's flag tables to the flag set.
func TestFlagTables(t *testing.T) {
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	docs.CheckFlags(t, usage.String(), "mcp.md#ptymcp flags", "mcp.md#Terminal flags (ptymcp and ptyhost)")
}
