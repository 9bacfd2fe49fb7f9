// Package tools is the model-facing surface of ptyactor: the terminal tools
// (terminal_*) and the background-task tools (task_*), listed by
// Toolset.Definitions, each with input and output JSON Schemas, argument
// validation, and results rendered as bounded text plus a structured value.
//
// One file per tool, named for it (terminal_send.go, task_kill.go): its
// name constant, schema, argument reading, call, value and text. The
// table in table.go lists them; Toolset.Call dispatches through it. Files
// named for what they do hold what several tools share: args.go
// (argument parsing), schema.go (schema helpers), render.go (truncation),
// values.go (session, status and task values), screenvalue.go (the
// screen), settled.go (a settled send's or wait's result), handback.go
// (a person's hold on the terminal).
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
