package darwin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrMalformed reports ps output that does not have the requested layout.
var ErrMalformed = errors.New("darwin: malformed ps output")

// ErrUnsupported is returned by ExecRunner, ReadKinfo and ListKinfo outside
// macOS.
var ErrUnsupported = errors.New("darwin: unsupported on this platform")

// Proc is one row of the process table.
type Proc struct {
	PID, PPID, PGID int
	// TPGID is the foreground process group of the process's controlling
	// terminal; 0 when it has none.
	TPGID int
	// Start is the start time as ps prints lstart, normalized to single
	// spaces ("Mon Nov 30 00:11:30 2026"). With PID it identifies the process
	// across pid reuse (to the second).
	Start string
	// Comm is the command, as ps prints it on macOS (often a full path); it
	// may contain spaces.
	Comm string
	// State is ps's stat column, e.g. "Ss", "R+", "Z".
	State string
}

// Alive reports whether the process is not a zombie.
func (p Proc) Alive() bool { return !strings.HasPrefix(p.State, "Z") }

// PSArgs are the arguments Snapshot passes to ps: every process, no header,
// comm last because it may contain spaces.
var PSArgs = []string{"-axo", "pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm="}

// lstartLayout parses lstart in the C locale (ExecRunner sets LC_ALL=C).
const lstartLayout = "Mon Jan 2 15:04:05 2006"

// ParsePS parses the output of `ps -axo pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm=`.
// Blank lines are skipped; any other line that does not have the five
// numeric and state columns, a five-field lstart and a command is an error
// wrapping ErrMalformed, because a caller walking the tree must not act on a
// partial table.
func ParsePS(out []byte) ([]Proc, error) {
	var procs []Proc
	n := 0
	for line := range bytes.Lines(out) {
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		p, err := parseLine(string(line))
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %s: %q", ErrMalformed, n, err, truncate(line))
		}
		procs = append(procs, p)
	}
	return procs, nil
}

func parseLine(line string) (Proc, error) {
	// pid ppid pgid tpgid stat, then 5 lstart fields, then comm.
	const fixed = 10
	rest := line
	fields := make([]string, 0, fixed)
	for range fixed {
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(rest, " \t\n")
		if end <= 0 {
			return Proc{}, errors.New("too few columns")
		}
		fields = append(fields, rest[:end])
		rest = rest[end:]
	}
	var p Proc
	for i, dst := range []*int{&p.PID, &p.PPID, &p.PGID, &p.TPGID} {
		v, err := strconv.Atoi(fields[i])
		if err != nil {
			return Proc{}, errors.New("bad number")
		}
		*dst = v
	}
	if p.PID < 0 || p.PPID < 0 || p.PGID < 0 {
		return Proc{}, errors.New("negative id")
	}
	p.State = fields[4]
	p.Start = strings.Join(fields[5:10], " ")
	if _, err := time.Parse(lstartLayout, p.Start); err != nil {
		return Proc{}, errors.New("bad lstart")
	}
	p.Comm = strings.Trim(rest, " \t\r\n")
	if p.Comm == "" {
		return Proc{}, errors.New("no command")
	}
	return p, nil
}

func truncate(b []byte) []byte {
	const limit = 120
	b = bytes.TrimRight(b, "\n")
	if len(b) > limit {
		return b[:limit]
	}
	return b
}

// ForegroundPgid returns the foreground process group of the shell's
// terminal: the shell's tpgid, when the shell is listed and it is > 0.
func ForegroundPgid(procs []Proc, shellPID int) (int, bool) {
	for _, p := range procs {
		if p.PID == shellPID {
			return p.TPGID, p.TPGID > 0
		}
	}
	return 0, false
}

// Members returns the live (non-zombie) processes of group pgid, by pid.
func Members(procs []Proc, pgid int) []Proc {
	var out []Proc
	for _, p := range procs {
		if p.PGID == pgid && p.Alive() {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Proc) int { return a.PID - b.PID })
	return out
}

// Descendants returns every process below root, zombies included, children
// first: each process comes after all of its own descendants, so signalling
// in this order reaches children before their parents. root itself is not
// included.
func Descendants(procs []Proc, root int) []Proc {
	children := make(map[int][]Proc)
	for _, p := range procs {
		if p.PID != p.PPID { // pid 0 on macOS is its own parent
			children[p.PPID] = append(children[p.PPID], p)
		}
	}
	for _, c := range children {
		slices.SortFunc(c, func(a, b Proc) int { return a.PID - b.PID })
	}
	var out []Proc
	seen := map[int]bool{root: true}
	var walk func(pid int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			if seen[c.PID] {
				continue
			}
			seen[c.PID] = true
			walk(c.PID)
			out = append(out, c)
		}
	}
	walk(root)
	return out
}

// Runner runs a command and returns its standard output. Cancelling ctx
// kills the command; the error then wraps ctx.Err().
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// Snapshot lists the process table through run (ExecRunner when nil).
func Snapshot(ctx context.Context, run Runner) ([]Proc, error) {
	if run == nil {
		run = ExecRunner
	}
	out, err := run(ctx, "ps", PSArgs...)
	if err != nil {
		return nil, fmt.Errorf("darwin: ps: %w", err)
	}
	return ParsePS(out)
}
