// Package tools is the model-facing surface of ptyactor: the terminal tools
// (terminal_*) and the background-task tools (task_*), named by the
// constants of schema.go and listed by Toolset.Definitions, each with input
// and output JSON Schemas, argument validation, and results rendered as
// bounded text plus a structured value.
//
// It knows no transport: an agent written in Go calls Toolset.Call
// directly, and cmd/ptymcp serves the same definitions over MCP.
//
// # Bounded results
//
// Every text result, errors included, is at most Options.MaxResultBytes
// long and cut on UTF-8 code point boundaries, with room kept for the
// marker "\n[output truncated]" that says it was cut (never twice).
package tools
