package teardown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/ptyactor/ptyactor/probes/linux"
)

const (
	// DefaultGrace is Options.Grace when unset (SPEC disposeGraceMs).
	DefaultGrace = 3 * time.Second
	// DefaultPoll is Options.Poll when unset.
	DefaultPoll = 10 * time.Millisecond
	// MaxPoll caps Options.Poll so a tree that went quiet is noticed
	// promptly instead of one long sleep later.
	MaxPoll = 25 * time.Millisecond

	// maxKillRounds bounds how often the SIGKILL phase rescans for
	// processes forked between the rescan and the kill of their parent.
	// Every round kills the forkers it finds, so a few always suffice.
	maxKillRounds = 4
)

// Options configures Tree. The zero value is ready to use.
type Options struct {
	// Grace is how long to wait after SIGTERM before SIGKILL, and after
	// SIGKILL before declaring survivors. Zero or negative means
	// DefaultGrace.
	Grace time.Duration
	// Poll is the interval between process-table checks while waiting.
	// Zero or negative means DefaultPoll; values above MaxPoll are lowered
	// to MaxPoll.
	Poll time.Duration
	// Proc is the procfs the process table is read from (tests pass
	// fixture trees). Nil means the host's table: /proc (linux.FS{}) on
	// Linux, sysctl kern.proc on macOS.
	Proc linux.ProcReader
	// Signaler delivers signals; nil means ProcSignaler{Proc: Proc}.
	// Inject one to test faults.
	Signaler Signaler
	// Clock measures the grace periods; nil means time.Now.
	Clock func() time.Time
	// Log receives one debug line per signal and warnings for failures.
	// The zero Logger discards everything.
	Log zerolog.Logger
	// RootReaped says the caller already reaped root (its shell exited).
	// Tree then takes only root's session members (session id ==
	// root.PID) and their descendants: the kernel does not reuse a pid
	// while any process still has it as its session id, so those are
	// root's; children by parent pid are not, since the pid may now be
	// someone else's. If a different process holds root.PID now, the
	// session is gone and nothing is captured (adoption still applies).
	RootReaped bool
	// AdoptTag, when not empty, is an environment entry ("NAME=value")
	// that every process of root's session inherited from root, unique to
	// the session (local.Backend sets one when its Subreaper option is on).
	// Tree then also takes the running children of the calling process
	// whose /proc/<pid>/environ holds exactly that entry and that did not
	// start before root (root itself excepted), with their descendants:
	// daemons that left the session with setsid and, their parent gone,
	// re-parented to the calling process as a child subreaper (see
	// BecomeSubreaper). A child whose environment is unreadable, or no
	// longer holds the entry, is never taken.
	AdoptTag string
}

// Report says what Tree did.
type Report struct {
	// Killed lists the pids that were sent SIGTERM or SIGKILL, each once,
	// in the order first signalled (children first).
	Killed []int
	// Survivors lists the members still running (not zombies) when Tree
	// gave up. Empty when the tree is quiet.
	Survivors []int
	// Reaped lists the members that had become zombie children of the
	// calling process (re-parented to it as a subreaper) and that Tree
	// reaped.
	Reaped []int
}

// Tree tears down every member of root's tree (see Capture) and verifies it
// is quiet; root itself is never signalled, since its owner stops and reaps
// it. Processes that exited, became zombies or whose pid was reused count as
// gone.
//
// On success the error is nil. If members are still running at the end, the
// error is a *SurvivorsError and Report.Survivors lists them; calling Tree
// again retries. If root no longer has its start identity, Tree signals
// nothing and returns an error wrapping ErrRootChanged.
//
// Members that end up as zombie children of the calling process (orphans it
// adopted as a child subreaper) are reaped before Tree returns, each with
// wait4 on its own pid once its start identity is confirmed: never
// wait4(-1), which would steal exit statuses from os/exec. Reaping needs the
// real procfs (Options.Proc nil or linux.FS{} on Linux); with any other
// ProcReader, and on macOS, nothing is reaped (nothing is adopted there).
//
// Cancelling ctx ends the current wait early: Tree then sends SIGKILL to
// every member it knows that has not had one (sending a signal does not
// block), skips verification, and returns an error wrapping
// context.Cause(ctx). A ctx that is already done signals nothing.
func Tree(ctx context.Context, root linux.Identity, opts Options) (Report, error) {
	if !platformSupported && (opts.Proc == nil || opts.Signaler == nil) {
		return Report{}, ErrUnsupported
	}
	if ctx.Err() != nil {
		return Report{}, fmt.Errorf("teardown: %w", context.Cause(ctx))
	}
	t := newRun(root, opts)
	return t.run(ctx)
}

// run is one Tree call.
type run struct {
	root       linux.Identity
	rootReaped bool
	adopt      adoption
	reapable   bool // proc is the real procfs: its zombies are ours to reap
	self       int
	grace      time.Duration
	poll       time.Duration
	proc       table
	sig        Signaler
	clock      func() time.Time
	log        zerolog.Logger

	report     Report
	signalled  map[linux.Identity]bool // got TERM or KILL: listed in Killed
	killSent   map[linux.Identity]bool // SIGKILL attempted
	signalErrs []error
	scanErrs   []error
	seen       []linux.Identity // every member captured, zombies included
}

func newRun(root linux.Identity, o Options) *run {
	t := &run{
		root:       root,
		rootReaped: o.RootReaped,
		self:       os.Getpid(),
		grace:      o.Grace,
		poll:       o.Poll,
		proc:       tableFor(o.Proc),
		sig:        o.Signaler,
		clock:      o.Clock,
		log:        o.Log,
		signalled:  make(map[linux.Identity]bool),
		killSent:   make(map[linux.Identity]bool),
	}
	if t.grace <= 0 {
		t.grace = DefaultGrace
	}
	if t.poll <= 0 {
		t.poll = DefaultPoll
	}
	t.poll = min(t.poll, MaxPoll)
	t.reapable = hostProcfs(t.proc)
	if o.AdoptTag != "" {
		t.adopt = adoption{host: t.self, tag: o.AdoptTag}
	}
	if t.sig == nil {
		t.sig = ProcSignaler{Proc: o.Proc}
	}
	if t.clock == nil {
		t.clock = time.Now
	}
	return t
}

// run is one teardown in its steps: capture the session, TERM who was
// captured and wait, KILL in rounds what is left and whoever joined
// (kill), then judge what survived (verdict).
func (t *run) run(ctx context.Context) (rep Report, err error) {
	first, err := capture(t.proc, t.root, t.rootReaped, t.adopt)
	if err != nil {
		return Report{}, err
	}
	t.log.Debug().Int("root", t.root.PID).Int("members", len(first)).Msg("teardown: captured")
	// Reap last, on every return path: a member killed here, or one that
	// exited earlier and sits as a zombie in root's session, may be the
	// host's child now.
	defer func() { rep.Reaped = t.reap() }()

	captured := identities(first)
	t.seen = captured
	for _, id := range captured {
		t.signal(id, syscall.SIGTERM)
	}
	alive, err := t.wait(ctx, captured)
	if err != nil {
		return t.abort(captured, err)
	}
	// Rescan: children forked while TERM was being handled, and members
	// that joined the session, were never captured. Captured survivors are
	// kept even if they no longer show up (they re-parented away).
	alive, known, err := t.kill(ctx, merge(t.rescan(), alive))
	if err != nil {
		return t.abort(known, err)
	}
	return t.verdict(alive)
}

// kill sends SIGKILL to union and waits, in rounds, until a fresh scan
// finds no one new, or for maxKillRounds. It returns who is still alive
// and every member it knew of (for abort, when err is ctx's).
func (t *run) kill(ctx context.Context, union []linux.Identity) (alive, known []linux.Identity, err error) {
	for round := 1; ; round++ {
		for _, id := range union {
			if !t.killSent[id] {
				t.signal(id, syscall.SIGKILL)
			}
		}
		if alive, err = t.wait(ctx, union); err != nil {
			return nil, union, err
		}
		// Verify with a fresh scan: a parent could fork between the rescan
		// and its own SIGKILL, and that child must not escape unseen.
		fresh := without(t.rescan(), union)
		if len(fresh) == 0 {
			return alive, union, nil
		}
		if round == maxKillRounds {
			return append(alive, fresh...), union, nil
		}
		union = append(union, fresh...)
	}
}

// verdict is the run's report once the kills are done: survivors are an
// error, and so is a rescan that failed, which could have hidden a fork.
func (t *run) verdict(alive []linux.Identity) (Report, error) {
	for _, id := range alive {
		t.report.Survivors = append(t.report.Survivors, id.PID)
	}
	if len(alive) > 0 {
		t.log.Warn().Ints("survivors", t.report.Survivors).Msg("teardown: processes survived SIGKILL")
		return t.report, &SurvivorsError{
			Survivors: t.report.Survivors,
			Err:       errors.Join(append(t.signalErrs, t.scanErrs...)...),
		}
	}
	if len(t.scanErrs) > 0 {
		// Everything we knew of is gone, but a rescan failed, so a fork we
		// never saw may still be running.
		return t.report, fmt.Errorf("teardown: could not verify the tree is quiet: %w", errors.Join(t.scanErrs...))
	}
	return t.report, nil
}

// signal sends sig to id after re-reading its identity; a member that is
// gone, reused or a zombie is left alone.
func (t *run) signal(id linux.Identity, sig syscall.Signal) {
	if id.PID <= 0 || id.PID == t.root.PID || id.PID == t.self {
		// Capture never yields these; refuse anyway, because a wrong root
		// passed by a caller must not make us signal ourselves.
		t.log.Warn().Int("pid", id.PID).Msg("teardown: refusing to signal root, self or invalid pid")
		return
	}
	s, err := t.proc.stat(id.PID)
	switch {
	case errors.Is(err, linux.ErrNotFound):
		return
	case err != nil:
		t.failed(id, sig, err)
		return
	case s.StartTime != id.StartTime:
		t.log.Debug().Int("pid", id.PID).Msg("teardown: pid was reused; not signalling")
		return
	case !s.Alive():
		return
	}
	if sig == syscall.SIGKILL {
		t.killSent[id] = true
	}
	if err := t.sig.Signal(id, sig); err != nil {
		if !errors.Is(err, ErrGone) {
			t.failed(id, sig, err)
		}
		return
	}
	t.log.Debug().Int("pid", id.PID).Str("comm", s.Comm).Stringer("signal", sig).Msg("teardown: signalled")
	if !t.signalled[id] {
		t.signalled[id] = true
		t.report.Killed = append(t.report.Killed, id.PID)
	}
	if sig == syscall.SIGTERM && s.State == 'T' {
		// A stopped process keeps SIGTERM pending until it is continued;
		// without SIGCONT a ^Z'd job would sit out the grace period and
		// never get to clean up.
		if err := t.sig.Signal(id, syscall.SIGCONT); err != nil && !errors.Is(err, ErrGone) {
			t.failed(id, syscall.SIGCONT, err)
		}
	}
}

func (t *run) failed(id linux.Identity, sig syscall.Signal, err error) {
	t.log.Warn().Err(err).Int("pid", id.PID).Stringer("signal", sig).Msg("teardown: signal failed")
	t.signalErrs = append(t.signalErrs, fmt.Errorf("pid %d %v: %w", id.PID, sig, err))
}

// wait polls until no member of ids is running or the grace period ends,
// and returns the members still running. It returns early with
// context.Cause(ctx) when ctx is done.
func (t *run) wait(ctx context.Context, ids []linux.Identity) ([]linux.Identity, error) {
	deadline := t.clock().Add(t.grace)
	timer := time.NewTimer(t.poll)
	defer timer.Stop()
	for {
		alive := t.running(ids)
		if len(alive) == 0 || !t.clock().Before(deadline) {
			return alive, nil
		}
		select {
		case <-ctx.Done():
			return alive, context.Cause(ctx)
		case <-timer.C:
			timer.Reset(t.poll)
		}
	}
}

// running returns the members of ids that still run with their identity.
// A member whose stat cannot be read counts as running: we cannot prove it
// quiet.
func (t *run) running(ids []linux.Identity) []linux.Identity {
	var alive []linux.Identity
	for _, id := range ids {
		s, err := t.proc.stat(id.PID)
		switch {
		case errors.Is(err, linux.ErrNotFound):
		case err != nil:
			alive = append(alive, id)
		case s.StartTime == id.StartTime && s.Alive():
			alive = append(alive, id)
		}
	}
	return alive
}

// rescan returns the running members of the tree now. If the root has
// changed (it exited on its own and was reaped), nothing can be adopted and
// the known members are all there is.
func (t *run) rescan() []linux.Identity {
	stats, err := capture(t.proc, t.root, t.rootReaped, t.adopt)
	if errors.Is(err, ErrRootChanged) {
		t.log.Debug().Err(err).Msg("teardown: root changed; not adopting new members")
		return nil
	}
	if err != nil {
		t.log.Warn().Err(err).Msg("teardown: rescan failed")
		t.scanErrs = append(t.scanErrs, err)
		return nil
	}
	t.seen = merge(t.seen, identities(stats))
	var ids []linux.Identity
	for _, s := range stats {
		if s.Alive() {
			ids = append(ids, s.Identity())
		}
	}
	return ids
}

func identities(stats []linux.Stat) []linux.Identity {
	ids := make([]linux.Identity, len(stats))
	for i, s := range stats {
		ids[i] = s.Identity()
	}
	return ids
}

// abort handles a cancelled wait: it sends SIGKILL to every known member
// that has not had one, so cancelling never leaves a TERM-ignoring process
// running, and reports the cause.
func (t *run) abort(known []linux.Identity, cause error) (Report, error) {
	for _, id := range merge(t.rescan(), known) {
		if !t.killSent[id] {
			t.signal(id, syscall.SIGKILL)
		}
	}
	return t.report, fmt.Errorf("teardown: interrupted before the tree was verified quiet: %w", cause)
}

// reap reaps the members that are zombie children of the calling process
// with their captured start identity. Only this process can reap its own
// children, and os/exec never started these (they were captured as
// descendants, session members or tagged orphans of root, never as direct
// children of the host), so the status taken is no one else's. A zombie
// keeps its pid until reaped, so the identity checked is the one reaped.
func (t *run) reap() []int {
	if !t.reapable {
		return nil
	}
	var reaped []int
	for _, id := range t.seen {
		s, err := t.proc.stat(id.PID)
		if err != nil || s.StartTime != id.StartTime || s.PPID != t.self || !s.Reapable() {
			continue
		}
		ok, err := t.reapExited(id.PID)
		if err != nil {
			t.log.Warn().Err(err).Int("pid", id.PID).Msg("teardown: reap failed")
			continue
		}
		if ok {
			t.log.Debug().Int("pid", id.PID).Str("comm", s.Comm).Msg("teardown: reaped")
			reaped = append(reaped, id.PID)
		}
	}
	return reaped
}

// reapExited reaps pid, a zombie child whose last thread is gone. The kernel
// counts the thread out a moment before it tells the parent the leader may
// be reaped, so a wait that finds nothing yet is retried for up to a grace;
// a zombie left behind here would have no one else to reap it.
func (t *run) reapExited(pid int) (bool, error) {
	deadline := t.clock().Add(t.grace)
	for {
		ok, err := reapChild(pid)
		if ok || err != nil || !t.clock().Before(deadline) {
			return ok, err
		}
		time.Sleep(t.poll)
	}
}

// merge returns a new slice: a followed by the members of b not in a.
func merge(a, b []linux.Identity) []linux.Identity {
	return slices.Concat(a, without(b, a))
}

// without returns the members of a not in b.
func without(a, b []linux.Identity) []linux.Identity {
	in := make(map[linux.Identity]bool, len(b))
	for _, id := range b {
		in[id] = true
	}
	var out []linux.Identity
	for _, id := range a {
		if !in[id] {
			out = append(out, id)
			in[id] = true
		}
	}
	return out
}
