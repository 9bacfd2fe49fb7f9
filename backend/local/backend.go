package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/sandbox"
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
	// another user).
	//
	// Adopted processes that exit while their session is open: a member of
	// the shell's session (a double fork such as "(cmd &)") is reaped on
	// the host's SIGCHLD, its session id being the proof. A daemon that
	// left the session (setsid) and exits by itself stays a zombie child
	// of the host until the host exits: a zombie's environment is gone, so
	// it cannot be proven to be the session's, and reaping an unproven
	// child could steal an exit status from os/exec. On other platforms
	// Spawn fails with teardown.ErrUnsupported.
	//
	// A sandboxed shell needs no adoption: it is pid 1 of its own pid
	// namespace, so its orphans re-parent to it, never to the host, and
	// teardown finds them under the shell.
	Subreaper bool
	// Policy resolves each session's sandbox mode and workspace root, once
	// per spawn, and holds the owner's mode-change fence from the start of
	// the spawn until the session is closed (or the spawn failed). The
	// workspace root is the working directory when SpawnRequest.Cwd is
	// empty. Nil means no policy: every shell runs unconfined
	// (danger-full-access) in SpawnRequest.Cwd or the host's working
	// directory, as before sandboxing existed. Share one Policy across
	// backend reloads so the fence still sees the sessions already open.
	Policy *sandbox.Policy
	// Sandbox confines the restricted modes (sandbox.NewBubblewrap on
	// Linux). With nil, a spawn whose mode is restricted fails with
	// *sandbox.UnavailableError before any process starts.
	Sandbox sandbox.Sandbox
	// Record writes every session's event stream to a record file
	// (record.go); its zero value records nothing.
	Record Record
	// Hide lists folders and files no sandboxed shell may see, even
	// read-only (bubblewrap binds / read-only): the console's folder of
	// URL files, a token file, a TLS key (sandbox.BubblewrapOptions.Hide).
	// Set it before Confine.
	Hide []string
}

// Confine gives the options one deployment-wide sandbox, as the commands
// (ptymcp, ptyhost) set it from their flags: a policy (mode, workspace
// root, network) for every owner, and for the restricted modes the
// bubblewrap provider. Without bwrap on the machine a restricted spawn
// fails before any process starts, with an error naming the package to
// install; installing it takes effect at the next spawn. Set Record first:
// its folder is hidden from the sandboxed shells.
func (o *Options) Confine(mode, root string, network bool) error {
	m, err := sandbox.ParseMode(mode)
	if err != nil {
		return err
	}
	policy, err := sandbox.NewPolicy(sandbox.Settings{Mode: m, Root: root, Network: network})
	if err != nil {
		return err
	}
	o.Policy = policy
	if m.Restricted() {
		// The records' folder holds every session's record: no sandboxed
		// shell sees it, even read-only. It is made now: the sandbox
		// hides only what exists at a spawn, and the first record is
		// written after the first shell is wrapped.
		hide := append([]string(nil), o.Hide...)
		if o.Record.Dir != "" {
			if err := os.MkdirAll(o.Record.Dir, 0o700); err != nil {
				return fmt.Errorf("records folder: %w", err)
			}
			hide = append(hide, o.Record.Dir)
		}
		o.Sandbox = sandbox.NewBubblewrap(sandbox.BubblewrapOptions{Hide: hide})
	}
	return nil
}

// SessionTagVar is the environment variable that carries a session's tag
// when Options.Subreaper is on. It overrides any value in Options.Env.
const SessionTagVar = runtimePrefix + "SESSION_TAG"

// becomeSubreaper runs teardown.BecomeSubreaper at most once per process.
var becomeSubreaper = sync.OnceValue(teardown.BecomeSubreaper)

// Backend starts bash sessions in PTYs.
type Backend struct {
	opts    Options
	orphans *orphanReaper // with Subreaper: reaps adopted members that exit
	records openRecords   // the records being written, which no prune removes
}

var _ backend.Backend = (*Backend)(nil)

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
	b := &Backend{opts: opts}
	if opts.Subreaper {
		b.orphans = newOrphanReaper(opts.Log)
	}
	return b
}

// Type is the backend type name.
func (b *Backend) Type() string { return b.opts.Type }

// Spawn starts the shell. It returns as soon as the process runs; the
// runtime's startup wait decides readiness. Cancelling ctx after the start
// tears the process down before returning the cause.
func (b *Backend) Spawn(ctx context.Context, spec messages.SpawnSpec, cfg messages.Config, events backend.Events) (_ backend.Session, err error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := checkCwd(spec.Cwd); err != nil {
		return nil, err
	}
	res, lease := b.resolve(spec)
	if lease != nil {
		defer func() {
			if err != nil {
				lease.Release()
			}
		}()
	}
	cwd := spec.Cwd
	if cwd == "" {
		cwd = res.Root // "" without a policy: the host's working directory
	}
	confined, err := sandbox.Confine(b.opts.Sandbox, append([]string{b.opts.Shell}, b.opts.Args...), res, cwd)
	if err != nil {
		return nil, err
	}
	defer confined.Close()
	tag, err := b.sessionTag()
	if err != nil {
		return nil, err
	}
	nonce := newNonce()
	cmd, err := b.shellCommand(confined, cwd, nonce, tag)
	if err != nil {
		return nil, err
	}
	log := b.opts.Log.With().Str("session", string(spec.SessionID)).Str("sandbox", string(res.Mode)).Logger()
	st, err := b.openStream(spec)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, cmd, confined, b.opts, cfg, nonce, tag, st, events, log)
	if err != nil {
		_, _ = st.closeSink()
		return nil, b.startError(ctx, err)
	}
	s.lease = lease
	if s.adoptTag != "" && b.orphans != nil {
		s.orphans = b.orphans
		b.orphans.add(s.PID())
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

// checkCwd refuses a working directory that is not one before anything
// is resolved or started: the caller's mistake, not the backend's.
func checkCwd(cwd string) error {
	if cwd == "" {
		return nil
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return messages.InvalidArgument("cwd %q is not a directory", cwd)
	}
	return nil
}

// resolve is the spawn's one sandbox resolution. With a policy, the fence
// is held from here (the lease, which the caller releases if the spawn
// fails): a mode change cannot slip in between resolving and starting.
// Without one, every shell runs unconfined and lease is nil.
func (b *Backend) resolve(spec messages.SpawnSpec) (sandbox.Resolution, *sandbox.Lease) {
	if b.opts.Policy == nil {
		return sandbox.Resolution{Owner: spec.Owner, Session: spec.SessionID, Mode: sandbox.DangerFullAccess}, nil
	}
	lease := b.opts.Policy.Acquire(spec.Owner, spec.SessionID)
	return lease.Resolution, lease
}

// sessionTag is the new session's SessionTagVar value, or "" when the
// backend adopts nothing. The first one makes the host a subreaper.
func (b *Backend) sessionTag() (string, error) {
	if !b.opts.Subreaper {
		return "", nil
	}
	if err := becomeSubreaper(); err != nil {
		return "", err
	}
	return newNonce(), nil
}

// shellCommand is the command that runs confined's argv in cwd: the
// scrubbed environment with the prompt's variables and the tag, and the
// prompt nonce's pipe as an extra file after the wrapper's.
func (b *Backend) shellCommand(confined *sandbox.Command, cwd, nonce, tag string) (*exec.Cmd, error) {
	nonceFile, err := nonceReader(nonce)
	if err != nil {
		return nil, fmt.Errorf("the prompt nonce's pipe: %w", err)
	}
	// The shell's descriptor for it follows the wrapper's (start closes
	// our copies of every extra file once the shell runs).
	extra := append(slices.Clip(confined.ExtraFiles), nonceFile)
	trusted := map[string]string{
		"PS1":            PromptText,
		"PROMPT_COMMAND": promptCommand(2 + len(extra)),
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
	cmd := exec.Command(confined.Argv[0], confined.Argv[1:]...)
	cmd.ExtraFiles = extra
	cmd.Env = BuildEnv(b.opts.ParentEnv(), b.opts.Defaults, trusted)
	cmd.Dir = cwd
	return cmd, nil
}

// startError is the error of a start that failed. Cancelled while the
// wrapper was starting the shell, start stopped it; the caller gets its
// cause unchanged (beside a cleanup failure, if any).
func (b *Backend) startError(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return fmt.Errorf("start %s: %w", b.opts.Shell, err)
	}
	var ce *messages.BackendCleanupError
	if errors.As(err, &ce) {
		return &messages.BackendCleanupError{SpawnErr: context.Cause(ctx), CleanupErr: ce.CleanupErr}
	}
	return context.Cause(ctx)
}

// nonceReader returns the read end of a pipe that holds the nonce and a
// newline and nothing else, its write end closed: the shell's first
// PROMPT_COMMAND reads it and closes it.
func nonceReader(nonce string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.WriteString(nonce + "\n") // far below a pipe's capacity: never blocks
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}
