// Package mcpserver serves ptyactor's terminal tools (package tools) over
// MCP: persistent PTY sessions with kernel-exact readiness, real signals,
// owner isolation and verified teardown, for any MCP-capable agent.
// cmd/ptymcp is its command line: New(Config), then Serve with a running
// actors.Service.
//
// Over stdio (stdio.go: its own transport, which answers a malformed line
// with a JSON-RPC error instead of ending the connection) the client is
// the one MCP session; with HTTPConfig.Addr it serves streamable HTTP on
// /mcp (http.go), where every request must carry the bearer token and a
// browser Origin must be the server's own or allowed (httpauth.go), off
// loopback only over TLS, within the bounds on callers without the token
// (httplimits.go). Each MCP session is one owner (server.go): it sees only
// its own terminals and tasks (background tasks are subscribable
// resources: taskres.go), within its caps (limits.go), and when it ends
// its terminals are closed and their process trees torn down; with
// -resume-file they are kept on the session hosts instead (hosts.go,
// resume.go). People watch the terminals in the console (console.go);
// a secret prompt is answered by a person through a link, which clients
// that elicit by URL hand their user (elicit.go). Shutdown ends the calls
// in flight and waits for them within bounds (shutdown.go).
//
// Logs go to the injected logger only: over stdio, stdout belongs to the
// protocol.
package mcpserver
