package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/teardown"
	"github.com/rs/zerolog"
)

// Options configures the local backend. Zero values take the documented
// defaults.
type Options struct {
	// Type is the backend type name; default "shell".
	Type string
	// Shell is the shell binary; default "/bin/bash".
	Shell string
	// Args are the shell's arguments; default --noprofile --norc -i.
	Args []string
	// Rows and Cols size the terminal; default 40x160.
	Rows, Cols uint16
	// Env is the trusted map: applied last, it may re-add scrubbed names.
	Env map[string]string
	// Defaults replaces AgentDefaults when non-nil.
	Defaults map[string]string
	// ParentEnv supplies the environment to scrub; default os.Environ.
	ParentEnv func() []string
	// Log receives the backend's logs; zero means none.
	Log zerolog.Logger
	// Subreaper closes the one escape from teardown (Linux only). With it
	// off, a process that leaves the shell's POSIX session (setsid, as
	// daemons do) and is orphaned before the session closes (its parent
	// exits, so it re-parents to init) is not found and never signalled:
	// it outlives the session. Processes that double-fork but stay in the
	// shell's session are found either way.
	//
	// With it on, the first Spawn makes the host process a child subreaper
	// (PR_SET_CHILD_SUBREAPER, once per process; it is process-wide and
	// stays set while the process lives), so such orphans re-parent to the
	// host instead, and every shell carries SessionTagVar set to a random
	// per-session value, which its descendants inherit. Closing a session
	// also kills the host's children that carry its tag, with their
	// descendants, and the host reaps the ones it adopted (wait4 on each
	// pid, never on -1). The tag is the only proof accepted, so another
	// session's daemon (another tag) and the host's own children (no tag)
	// are never signalled.
	//
	// Even with it on, an orphan escapes when its environment no longer
	// holds the tag (started with env -i, or it wrote over its environment
	// block, as setproctitle does) or cannot be read by the host (setuid,
	// another user). An adopted daemon that exits by itself while its
	// session is open stays a zombie child of the host until the host
	// exits: a zombie's environment is gone, so it cannot be proven to be
	// the session's, and reaping an unproven child could steal an exit
	// status from os/exec. On other platforms Spawn fails with
	// teardown.ErrUnsupported.
	Subreaper bool
}

// SessionTagVar is the environment variable that carries a session's tag
// when Options.Subreaper is on. It overrides any value in Options.Env.
const SessionTagVar = runtimePrefix + "SESSION_TAG"

// becomeSubreaper runs teardown.BecomeSubreaper at most once per process.
var becomeSubreaper = sync.OnceValue(teardown.BecomeSubreaper)

// Backend starts bash sessions in PTYs.
type Backend struct{ opts Options }

var _ messages.Backend = (*Backend)(nil)

// New returns a local backend.
func New(opts Options) *Backend {
	if opts.Type == "" {
		opts.Type = "shell"
	}
	if opts.Shell == "" {
		opts.Shell = "/bin/bash"
	}
	if opts.Args == nil {
		opts.Args = []string{"--noprofile", "--norc", "-i"}
	}
	if opts.Rows == 0 {
		opts.Rows = 40
	}
	if opts.Cols == 0 {
		opts.Cols = 160
	}
	if opts.Defaults == nil {
		opts.Defaults = AgentDefaults()
	}
	if opts.ParentEnv == nil {
		opts.ParentEnv = os.Environ
	}
	return &Backend{opts: opts}
}

// Type is the backend type name.
func (b *Backend) Type() string { return b.opts.Type }

// Spawn starts the shell. It returns as soon as the process runs; the
// runtime's startup wait decides readiness. Cancelling ctx after the start
// tears the process down before returning the cause.
func (b *Backend) Spawn(ctx context.Context, spec messages.SpawnSpec, cfg messages.Config, events messages.Events) (_ messages.BackendSession, err error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if spec.Cwd != "" {
		fi, serr := os.Stat(spec.Cwd)
		if serr != nil || !fi.IsDir() {
			return nil, messages.InvalidArgument("cwd %q is not a directory", spec.Cwd)
		}
	}
	var tag string // the session's SessionTagVar value; "" adopts nothing
	if b.opts.Subreaper {
		if err := becomeSubreaper(); err != nil {
			return nil, err
		}
		tag = newNonce()
	}
	nonce := newNonce()
	trusted := map[string]string{
		"PS1":            PromptText,
		"PROMPT_COMMAND": promptCommand(nonce),
		// A null HISTFILE keeps history in memory only: a model's commands
		// never land in the user's ~/.bash_history.
		"HISTFILE": "",
	}
	for k, v := range b.opts.Env {
		trusted[k] = v
	}
	if tag != "" {
		trusted[SessionTagVar] = tag
	}
	cmd := exec.Command(b.opts.Shell, b.opts.Args...)
	cmd.Env = BuildEnv(b.opts.ParentEnv(), b.opts.Defaults, trusted)
	cmd.Dir = spec.Cwd
	s, err := start(cmd, b.opts, cfg, nonce, tag, events, b.opts.Log.With().Str("session", string(spec.SessionID)).Logger())
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", b.opts.Shell, err)
	}
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		if _, cerr := s.Close(context.Background(), "PTY spawn cancelled"); cerr != nil {
			return nil, &messages.BackendCleanupError{SpawnErr: cause, CleanupErr: cerr}
		}
		return nil, cause
	}
	return s, nil
}
