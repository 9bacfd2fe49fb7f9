package teardown

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// Capture returns the members of root's tree, children first (deepest
// first), each with its start identity: root's descendants by parent pid,
// plus every process in root's own session (session id == root.PID) and
// their descendants. Root itself is never included.
//
// Capture verifies, after scanning, that root.PID still carries root's start
// identity; if it does not, it returns an error wrapping ErrRootChanged and no
// members, because a recycled pid's children and session are not ours.
func Capture(r linux.ProcReader, root linux.Identity) ([]linux.Identity, error) {
	stats, err := capture(procTable{r}, root, false, adoption{})
	if err != nil {
		return nil, err
	}
	ids := make([]linux.Identity, len(stats))
	for i, s := range stats {
		ids[i] = s.Identity()
	}
	return ids, nil
}

// adoption says which children of the host process a capture takes (see
// Options.AdoptTag). The zero value adopts nothing.
type adoption struct {
	host int    // the process that adopts orphans (os.Getpid())
	tag  string // the NAME=value environment entry; "" adopts nothing
}

// capture is Capture keeping the whole stat of each member, so Tree knows
// which members are stopped without reading them again. With reaped, root
// was already reaped by its parent (Options.RootReaped).
func capture(tb table, root linux.Identity, reaped bool, adopt adoption) ([]linux.Stat, error) {
	if root.PID <= 1 {
		// pid 1 is init: its "descendants" and session are the whole
		// system.
		return nil, fmt.Errorf("teardown: root pid %d: %w", root.PID, ErrInvalidPID)
	}
	stats, err := tb.list()
	if err != nil {
		return nil, fmt.Errorf("teardown: scan processes: %w", err)
	}
	// Verify after the scan, not before: if the root was alive with its
	// identity after every entry was read, every entry that names it as
	// parent named our root. A pid cannot be reused while any process
	// still has it as session id, so session members are ours too.
	err = verifyRoot(tb, root)
	w := newWalker(stats)
	switch {
	case !reaped && err != nil:
		return nil, err
	case !reaped:
		w.walk(root.PID, 0)
		w.session(stats, root.PID)
	case errors.Is(err, ErrRootChanged) && !errors.Is(err, linux.ErrNotFound):
		// Another process holds the pid now, so no process can still
		// have it as session id: the session is gone.
	default:
		w.session(stats, root.PID)
	}
	w.adopt(tb, stats, root, adopt)
	return w.ordered(), nil
}

func verifyRoot(tb table, root linux.Identity) error {
	s, err := tb.stat(root.PID)
	if errors.Is(err, linux.ErrNotFound) {
		return fmt.Errorf("%w: pid %d has exited: %w", ErrRootChanged, root.PID, err)
	}
	if err != nil {
		return fmt.Errorf("teardown: read root: %w", err)
	}
	if s.StartTime != root.StartTime {
		return fmt.Errorf("%w: pid %d started at %d, want %d", ErrRootChanged, root.PID, s.StartTime, root.StartTime)
	}
	return nil
}

// Descendants returns the processes in stats that descend from pid root by
// parent pid, deepest first. Root itself is not included.
func Descendants(stats []linux.Stat, root int) []linux.Stat {
	w := newWalker(stats)
	w.walk(root, 0)
	return w.ordered()
}

type ranked struct {
	stat  linux.Stat
	depth int
}

type walker struct {
	children map[int][]linux.Stat
	seen     map[int]bool
	out      []ranked
}

func newWalker(stats []linux.Stat) *walker {
	w := &walker{children: make(map[int][]linux.Stat), seen: make(map[int]bool)}
	for _, s := range stats {
		w.children[s.PPID] = append(w.children[s.PPID], s)
	}
	return w
}

func (w *walker) add(s linux.Stat, depth int) {
	w.seen[s.PID] = true
	w.out = append(w.out, ranked{s, depth})
}

// walk adds the descendants of pid breadth-first; seen guards against a
// snapshot that, read over time, shows a parent loop.
func (w *walker) walk(pid, depth int) {
	w.seen[pid] = true
	queue := []ranked{{linux.Stat{PID: pid}, depth}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range w.children[p.stat.PID] {
			if w.seen[c.PID] || c.PID <= 1 {
				continue
			}
			w.add(c, p.depth+1)
			queue = append(queue, ranked{c, p.depth + 1})
		}
	}
}

// session adds the members of session sid (except its leader) that the
// walk has not found, with their descendants. Their parent is gone from the
// tree (they re-parented away), so each ranks as a child of the leader and
// its own children are still killed first.
func (w *walker) session(stats []linux.Stat, sid int) {
	for _, s := range stats {
		if s.Session == sid && s.PID != sid && !w.seen[s.PID] {
			w.add(s, 1)
			w.walk(s.PID, 1)
		}
	}
}

// adopt adds, with their descendants, the running children of the host
// that carry the session's tag in their environment and did not start
// before root: daemons that left root's session (setsid) and re-parented to
// the host as a child subreaper. A child whose environment cannot be read
// is not taken: only positive proof makes a child of the host a member.
func (w *walker) adopt(tb table, stats []linux.Stat, root linux.Identity, a adoption) {
	if a.tag == "" || a.host <= 1 {
		return
	}
	for _, s := range stats {
		if s.PPID != a.host || s.PID == root.PID || w.seen[s.PID] || !s.Alive() ||
			s.StartTime < root.StartTime || !tb.hasEnv(s.PID, a.tag) {
			continue
		}
		w.add(s, 1)
		w.walk(s.PID, 1)
	}
}

// ordered returns the walk deepest first, keeping discovery order within a
// depth, so a parent is signalled after its children and cannot react to
// their death by forking replacements that were never captured.
func (w *walker) ordered() []linux.Stat {
	slices.SortStableFunc(w.out, func(a, b ranked) int { return b.depth - a.depth })
	out := make([]linux.Stat, len(w.out))
	for i, r := range w.out {
		out[i] = r.stat
	}
	return out
}
