// Command ptymcp serves ptyactor's terminal tools over MCP: persistent PTY
// bash sessions with kernel-exact readiness, real signals, owner isolation
// and verified teardown, for any MCP-capable agent.
//
// By default it speaks MCP over stdio (the client starts it); with -http
// ADDR it serves streamable HTTP on /mcp, where every request must carry
// the bearer token from -http-token-file and a browser Origin must be the
// server's own or allowed by -http-allow-origin; off loopback it needs
// TLS (-http-tls-cert, -http-tls-key). Each MCP session (the stdio
// connection, or one HTTP session) is one owner: it sees only its own
// terminals and tasks, and when it ends, its terminals are closed and their
// process trees torn down. SIGINT or SIGTERM disposes everything, then the
// server exits. Logs go to stderr only: stdout belongs to the protocol.
//
// The server is package mcpserver; this command reads its flags
// (flags.go) into mcpserver.Config and starts it the way ptyhost starts
// (terminals.Command).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/cmd/internal/terminals"
	"github.com/ptyactor/ptyactor/mcpserver"
	"github.com/rs/zerolog"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ptymcp:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	var c config
	var srv *mcpserver.Server
	return terminals.Command{
		Name: "ptymcp",
		Parse: func(args []string, stderr io.Writer) (*terminals.Flags, error) {
			var err error
			c, err = parseFlags(args, stderr)
			return &c.local, err
		},
		Prepare: func(log zerolog.Logger) (err error) {
			c.server.Log, c.server.Stderr = log, stderr
			if srv, err = mcpserver.New(c.server); err != nil {
				return err
			}
			// The bearer token is also the console's operator login.
			c.local.HideFiles = append(c.local.HideFiles, srv.TokenFile())
			return nil
		},
		Serve: func(ctx context.Context, svc *actors.Service, _ zerolog.Logger) error {
			return srv.Serve(ctx, svc)
		},
		Stopping: "stopping: a second signal ends the process at once",
	}.Run(args, stderr)
}
