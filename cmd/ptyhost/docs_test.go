package main

import (
	"bytes"
	"errors"
	"flag"
	"testing"

	"github.com/ptyactor/ptyactor/docs"
)

// TestFlagTables holds docs/hosts.md's flag table, with the terminal flags
// it shares with ptymcp (docs/mcp.md), to the flag set.
func TestFlagTables(t *testing.T) {
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	docs.CheckFlags(t, usage.String(), "hosts.md#ptyhost flags", "mcp.md#Terminal flags (ptymcp and ptyhost)")
}
