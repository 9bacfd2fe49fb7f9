package teardown

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ptyactor/ptyactor/probes/linux"
)

// Fake pids sit above PID_MAX_LIMIT (4194304) so they can never name a real
// process, not even this test binary.
const fakeBase = 5_000_000

// fakeProc is a mutable process table served as a linux.ProcReader. Hooks
// run after the n-th read of a pid's stat, which lets a test change the
// table at an exact point of Tree (say, recycle a pid right after capture).
type fakeProc struct {
	mu    sync.Mutex
	procs map[int]linux.Stat
	env   map[int][]string // environ entries; a pid without one is unreadable
	reads map[int]int
	hooks map[hookKey]func(*fakeProc)
}

type hookKey struct{ pid, nth int }

func newFakeProc(stats ...linux.Stat) *fakeProc {
	p := &fakeProc{procs: make(map[int]linux.Stat), env: make(map[int][]string), reads: make(map[int]int), hooks: make(map[hookKey]func(*fakeProc))}
	for _, s := range stats {
		p.procs[s.PID] = s
	}
	return p
}

// proc builds a fake stat: state S, its own process group.
func proc(pid, ppid, session int, start uint64) linux.Stat {
	return linux.Stat{PID: pid, PPID: ppid, PGRP: pid, Session: session, TPGID: -1, State: 'S', StartTime: start, Comm: "p" + strconv.Itoa(pid)}
}

// after registers f to run, table unlocked, after the nth read of pid's stat.
func (p *fakeProc) after(pid, nth int, f func(*fakeProc)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hooks[hookKey{pid, nth}] = f
}

func (p *fakeProc) set(s linux.Stat) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.procs[s.PID] = s
}

func (p *fakeProc) get(pid int) (linux.Stat, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.procs[pid]
	return s, ok
}

func (p *fakeProc) remove(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.procs, pid)
}

// setEnv gives pid an environment.
func (p *fakeProc) setEnv(pid int, env ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.env[pid] = env
}

func (p *fakeProc) ReadFile(path string) ([]byte, error) {
	if pidStr, ok := strings.CutSuffix(path, "/environ"); ok {
		pid, _ := strconv.Atoi(pidStr)
		p.mu.Lock()
		defer p.mu.Unlock()
		env, ok := p.env[pid]
		if _, alive := p.procs[pid]; !ok || !alive {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
		}
		if p.procs[pid].State == 'Z' {
			return nil, nil // a zombie's environment reads as empty
		}
		var b []byte
		for _, e := range env {
			b = append(append(b, e...), 0)
		}
		return b, nil
	}
	pidStr, ok := strings.CutSuffix(path, "/stat")
	pid, err := strconv.Atoi(pidStr)
	if !ok || err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	p.mu.Lock()
	s, ok := p.procs[pid]
	p.reads[pid]++
	hook := p.hooks[hookKey{pid, p.reads[pid]}]
	p.mu.Unlock()
	if hook != nil {
		defer hook(p)
	}
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return fmt.Appendf(nil, "%d (%s) %c %d %d %d 0 %d 0 0 0 0 0 0 0 0 0 0 0 0 0 %d 0 0\n",
		s.PID, s.Comm, s.State, s.PPID, s.PGRP, s.Session, s.TPGID, s.StartTime), nil
}

func (p *fakeProc) ReadLink(path string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: path, Err: fs.ErrNotExist}
}

func (p *fakeProc) ReadDirNames(path string) ([]string, error) {
	if path != "." {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	names := []string{"self", "meminfo"}
	for pid := range p.procs {
		names = append(names, strconv.Itoa(pid))
	}
	return names, nil
}

type sent struct {
	pid int
	sig syscall.Signal
}

var errRefused = errors.New("refused by test")

// fakeSignaler plays the kernel for a fakeProc: it checks identities like
// ProcSignaler, turns TERM into a zombie (unless the pid ignores TERM) and
// KILL into removal, and records every call.
type fakeSignaler struct {
	proc *fakeProc

	mu         sync.Mutex
	sent       []sent
	ignoreTERM map[int]bool
	refuse     map[int]bool
	onSignal   func(pid int, sig syscall.Signal)
}

func (f *fakeSignaler) Signal(id linux.Identity, sig syscall.Signal) error {
	f.mu.Lock()
	f.sent = append(f.sent, sent{id.PID, sig})
	refuse, ignore, hook := f.refuse[id.PID], f.ignoreTERM[id.PID], f.onSignal
	f.mu.Unlock()
	if hook != nil {
		hook(id.PID, sig)
	}
	if refuse {
		return errRefused
	}
	s, ok := f.proc.get(id.PID)
	if !ok || s.StartTime != id.StartTime {
		return ErrGone
	}
	switch {
	case sig == syscall.SIGKILL, sig == syscall.SIGTERM && !ignore && s.State != 'T':
		s.State = 'Z'
		f.proc.set(s)
	case sig == syscall.SIGCONT && s.State == 'T':
		// A continued process now handles its pending TERM.
		if ignore {
			s.State = 'S'
		} else {
			s.State = 'Z'
		}
		f.proc.set(s)
	}
	return nil
}

func (f *fakeSignaler) calls() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.sent...)
}

func (f *fakeSignaler) signalled(pid int) bool {
	for _, c := range f.calls() {
		if c.pid == pid {
			return true
		}
	}
	return false
}
