package terminals

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/cmd/internal/cli"
	"github.com/rs/zerolog"
)

// Command is the life ptymcp and ptyhost share, so that it is written
// once: the command line read (-help and -version end it cleanly), the
// log made, the command's credentials loaded before any shell can start,
// the local service started, and the signals that stop it all.
type Command struct {
	// Name names the command in -version and in its log lines.
	Name string
	// Parse reads the command line into the command's own settings and
	// returns its terminal flags, registered and checked.
	Parse func(args []string, stderr io.Writer) (*Flags, error)
	// Prepare, when set, runs with the log before the service starts: a
	// credential that fails to load ends the command before any shell
	// runs, and one the flags name is added to the sandbox's hidden files
	// in time.
	Prepare func(log zerolog.Logger) error
	// Serve runs with the started service until ctx ends, at the first
	// SIGINT or SIGTERM; the service is shut down (every session closed,
	// its tree torn down) after it returns.
	Serve func(ctx context.Context, svc *actors.Service, log zerolog.Logger) error
	// Stopping, when set, is logged at the first signal, with its cause.
	Stopping string
}

// Run runs the command on args, logging to stderr.
func (c Command) Run(args []string, stderr io.Writer) error {
	f, err := c.Parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if errors.Is(err, cli.ErrVersion) {
		fmt.Println(cli.Version(c.Name))
		return nil
	}
	if err != nil {
		return err
	}
	log := f.Logger(stderr, c.Name)
	if c.Prepare != nil {
		if err := c.Prepare(log); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Signals get their default action back as soon as the first one
	// starts the shutdown: a second one ends the process at once, whatever
	// the shutdown waits for.
	context.AfterFunc(ctx, func() {
		stop()
		if cause := context.Cause(ctx); c.Stopping != "" && cause != context.Canceled { // a signal's cause "is" Canceled too
			log.Info().Str("cause", cause.Error()).Msg(c.Stopping)
		}
	})
	svc, shutdown, err := f.Start(ctx, log)
	if err != nil {
		return err
	}
	defer shutdown()
	return c.Serve(ctx, svc, log)
}
