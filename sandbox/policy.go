package sandbox

import (
	"fmt"
	"os"
	"sync"

	"github.com/ptyactor/ptyactor/messages"
)

// Settings are a deployment's defaults. Every owner starts with them; SetMode
// and SetNetwork override the mode and the network flag per owner.
type Settings struct {
	// Mode is the default mode; empty means ReadOnly (the safe default: a
	// deployment opts into writes).
	Mode Mode
	// Root is the workspace root: the only writable host directory in
	// WorkspaceWrite, and the default working directory in every mode.
	// Empty means the working directory of the process at NewPolicy. It
	// must be an existing directory other than "/"; the policy keeps it
	// absolute with symbolic links resolved, so the sandbox binds exactly
	// the directory the caller meant.
	Root string
	// Network lets restricted modes use the network (the host's network
	// namespace). Off, a restricted shell sees only its own loopback.
	// DangerFullAccess always has the network.
	Network bool
	// WritableGit makes Root/.git writable in WorkspaceWrite. Off (the
	// default), a .git that exists when the session starts is read-only,
	// so a shell cannot rewrite history or install git hooks that would
	// later run outside the sandbox.
	WritableGit bool
}

// Resolution is one session's effective sandbox, resolved once at spawn.
type Resolution struct {
	Owner       messages.Owner
	Session     messages.SessionID
	Mode        Mode
	Root        string // the workspace root, and the default working directory
	Network     bool   // restricted modes may use the network
	WritableGit bool   // WorkspaceWrite may write Root/.git
}

// Policy resolves sessions' sandboxes and fences mode changes. It is safe
// for concurrent use, and meant to outlive any one backend: give the same
// Policy to a backend that replaces an unloaded one, and the fence still
// knows the sessions the old one opened.
type Policy struct {
	def Settings

	mu     sync.Mutex
	owners map[messages.Owner]*ownerState
}

// ownerState is one owner's overrides and its open or pending sessions. An
// owner with neither has no entry.
type ownerState struct {
	mode    Mode  // "" means the deployment default
	network *bool // nil means the deployment default
	leases  int
}

func (o *ownerState) empty() bool { return o.mode == "" && o.network == nil && o.leases == 0 }

// NewPolicy validates s and returns a policy with s as the deployment
// default.
func NewPolicy(s Settings) (*Policy, error) {
	if s.Mode == "" {
		s.Mode = ReadOnly
	}
	if !s.Mode.Valid() {
		return nil, fmt.Errorf("%w: unknown sandbox mode %q", ErrInvalid, s.Mode)
	}
	root, err := cleanRoot(s.Root)
	if err != nil {
		return nil, err
	}
	s.Root = root
	return &Policy{def: s, owners: map[messages.Owner]*ownerState{}}, nil
}

// cleanRoot makes root absolute and free of symbolic links, and checks it
// is a directory that can be confined (not "/").
func cleanRoot(root string) (string, error) {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: no workspace root given and the working directory is unknown: %w", ErrInvalid, err)
		}
		root = wd
	}
	real, err := realDir("workspace root", root)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: workspace root %q: %w", ErrInvalid, root, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: workspace root %q is not a directory", ErrInvalid, root)
	}
	if real == "/" {
		// Writable "/" is danger-full-access under another name.
		return "", fmt.Errorf("%w: workspace root must not be /", ErrInvalid)
	}
	return real, nil
}

// Defaults returns the deployment defaults (Root cleaned).
func (p *Policy) Defaults() Settings { return p.def }

// Resolve returns the sandbox owner's session would get now, without
// taking a lease. Spawns use Acquire instead, so the answer cannot change
// between the resolve and the start.
func (p *Policy) Resolve(owner messages.Owner, session messages.SessionID) Resolution {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resolveLocked(owner, session)
}

func (p *Policy) resolveLocked(owner messages.Owner, session messages.SessionID) Resolution {
	r := Resolution{
		Owner: owner, Session: session,
		Mode: p.def.Mode, Root: p.def.Root, Network: p.def.Network, WritableGit: p.def.WritableGit,
	}
	if o := p.owners[owner]; o != nil {
		if o.mode != "" {
			r.Mode = o.mode
		}
		if o.network != nil {
			r.Network = *o.network
		}
	}
	return r
}

// Acquire resolves owner's session and leases it: until the lease is
// released, the fence refuses any change of owner's effective mode or
// network flag. A backend acquires once per spawn, before it starts
// anything, and releases when the spawn fails or the session is closed.
func (p *Policy) Acquire(owner messages.Owner, session messages.SessionID) *Lease {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.owners[owner]
	if o == nil {
		o = &ownerState{}
		p.owners[owner] = o
	}
	o.leases++
	return &Lease{Resolution: p.resolveLocked(owner, session), p: p}
}

// Sessions reports how many leases owner holds: sessions open or being
// created under this policy.
func (p *Policy) Sessions(owner messages.Owner) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.owners[owner]; o != nil {
		return o.leases
	}
	return 0
}

// SetMode sets owner's mode; the empty mode returns owner to the deployment
// default. A change that would alter owner's effective mode is refused with
// a *ChangeRefusedError (errors.Is ErrChangeRefused) while owner holds a
// lease, and nothing changes; a call that keeps the effective mode always
// succeeds. Other owners are never affected.
func (p *Policy) SetMode(owner messages.Owner, m Mode) error {
	if m != "" && !m.Valid() {
		return fmt.Errorf("%w: unknown sandbox mode %q", ErrInvalid, m)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.owners[owner]
	if o == nil {
		o = &ownerState{}
	}
	from, to := p.def.Mode, p.def.Mode
	if o.mode != "" {
		from = o.mode
	}
	if m != "" {
		to = m
	}
	if from != to && o.leases > 0 {
		return &ChangeRefusedError{Setting: "mode", From: string(from), To: string(to), Sessions: o.leases}
	}
	o.mode = m
	p.store(owner, o)
	return nil
}

// SetNetwork sets whether owner's restricted sessions may use the network;
// nil returns owner to the deployment default. It is fenced like SetMode:
// a terminal started without the network must not gain it, and one
// started with it must not keep it past a change.
func (p *Policy) SetNetwork(owner messages.Owner, allowed *bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.owners[owner]
	if o == nil {
		o = &ownerState{}
	}
	from, to := p.def.Network, p.def.Network
	if o.network != nil {
		from = *o.network
	}
	if allowed != nil {
		to = *allowed
	}
	if from != to && o.leases > 0 {
		return &ChangeRefusedError{Setting: "network access", From: netWord(from), To: netWord(to), Sessions: o.leases}
	}
	if allowed != nil {
		v := *allowed
		allowed = &v
	}
	o.network = allowed
	p.store(owner, o)
	return nil
}

func netWord(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "denied"
}

// store keeps o as owner's state, or drops it when it holds nothing, so a
// long-running service does not accumulate every owner it ever saw.
func (p *Policy) store(owner messages.Owner, o *ownerState) {
	if o.empty() {
		delete(p.owners, owner)
		return
	}
	p.owners[owner] = o
}

// Lease is one session's hold on its owner's fence, with the resolution it
// was started under.
type Lease struct {
	Resolution
	p    *Policy
	once sync.Once
}

// Release ends the lease. It is idempotent and safe on a nil lease.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		p := l.p
		p.mu.Lock()
		defer p.mu.Unlock()
		if o := p.owners[l.Owner]; o != nil {
			o.leases--
			p.store(l.Owner, o)
		}
	})
}
