package faulty

import (
	"context"
	"fmt"
	"sync"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// Reply is a Responder's answer to one submitted line.
type Reply struct {
	// Output is what the command prints (use "\r\n" line ends, as a
	// terminal does).
	Output string
	// Running leaves the command running: no prompt follows until a SIGINT
	// ends it (status 130).
	Running bool
	// Code is the command's exit status, carried by the prompt marker.
	Code int
}

// Responder answers a submitted line (without its Enter).
type Responder func(line string) Reply

// Echo is the default Responder: a command prints its own line and exits 0.
func Echo(line string) Reply { return Reply{Output: line + "\r\n"} }

// Option configures a Backend.
type Option func(*Backend)

// WithResponder sets how the fake shell (or reader) answers each line.
func WithResponder(r Responder) Option { return func(b *Backend) { b.respond = r } }

// Reader makes sessions run a program that reads the terminal after the
// shell's first prompt: lines are answered without a prompt marker, and
// only the exact tier (ProbeStdin) proves the program waits again.
func Reader() Option { return func(b *Backend) { b.reader = true } }

// Backend is a scripted backend.Backend. It is safe for concurrent use.
type Backend struct {
	typ     string
	respond Responder
	reader  bool

	mu       sync.Mutex
	queue    map[Op][]Fault
	holds    map[Op][]<-chan struct{} // see Hold
	calls    map[Op]int
	changed  chan struct{} // closed and replaced on every call
	sessions []*Session
	nextPID  int
}

var _ backend.Backend = (*Backend)(nil)

// New returns a Backend of type typ.
func New(typ string, opts ...Option) *Backend {
	b := &Backend{typ: typ, respond: Echo, queue: map[Op][]Fault{}, calls: map[Op]int{}, changed: make(chan struct{}), nextPID: 40000}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Type implements backend.Backend.
func (b *Backend) Type() string { return b.typ }

// Script queues faults for the next calls of op made by any session (and
// for Spawn), one fault per call. It panics if op cannot express a fault.
func (b *Backend) Script(op Op, faults ...Fault) {
	for _, f := range faults {
		f.check(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue[op] = append(b.queue[op], faults...)
}

// Calls returns how many calls of op have started, across sessions.
func (b *Backend) Calls(op Op) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[op]
}

// Entered waits until at least n calls of op have started (counted across
// sessions), or ctx ends. Tests use it to act while a call is in flight.
func (b *Backend) Entered(ctx context.Context, op Op, n int) error {
	for {
		b.mu.Lock()
		got, ch := b.calls[op], b.changed
		b.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("faulty: %d of %d %s calls entered: %w", got, n, op, context.Cause(ctx))
		}
	}
}

// Sessions returns the sessions started so far, in spawn order.
func (b *Backend) Sessions() []*Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*Session(nil), b.sessions...)
}

// enter counts a call of op, waits out a Hold, and takes the next fault
// for it: the session's own queue first (s may be nil), then the
// backend's.
func (b *Backend) enter(s *Session, op Op) (Fault, bool) {
	if hold := b.count(op); hold != nil {
		<-hold
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s != nil {
		if f, ok := pop(s.queue, op); ok {
			return f, true
		}
	}
	return pop(b.queue, op)
}

// count counts a call of op, waking Entered, and takes the next Hold for
// it, if any.
func (b *Backend) count(op Op) (hold <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls[op]++
	close(b.changed)
	b.changed = make(chan struct{})
	if hs := b.holds[op]; len(hs) > 0 {
		hold, b.holds[op] = hs[0], hs[1:]
	}
	return hold
}

// pending reports whether a fault is queued for op (session first).
func (b *Backend) pending(s *Session, op Op) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(s.queue[op]) > 0 || len(b.queue[op]) > 0
}

func pop(q map[Op][]Fault, op Op) (Fault, bool) {
	fs := q[op]
	if len(fs) == 0 {
		return Fault{}, false
	}
	q[op] = fs[1:]
	return fs[0], true
}

// Spawn implements backend.Backend. Scripted faults: Fail, Hang, Exit,
// Silent.
func (b *Backend) Spawn(ctx context.Context, spec messages.SpawnSpec, _ messages.Config, ev backend.Events) (backend.Session, error) {
	f, faulted := b.enter(nil, OpSpawn)
	if faulted {
		f.check(OpSpawn)
		switch f.kind {
		case kindFail:
			return nil, f.err
		case kindHang:
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("faulty: spawn abandoned: %w", context.Cause(ctx))
			case <-f.release:
			}
		}
	}
	b.mu.Lock()
	b.nextPID += 10
	s := &Session{b: b, ev: ev, pid: b.nextPID, reader: b.reader, respond: b.respond, spec: spec,
		queue: map[Op][]Fault{}, gone: make(chan struct{}), collecting: true}
	b.sessions = append(b.sessions, s)
	b.mu.Unlock()
	if faulted && f.kind == kindSilent {
		return s, nil
	}
	s.emit("faulty shell\r\n", false)
	if faulted && f.kind == kindExit {
		s.exit(messages.ExitedWith(f.code))
		return s, nil
	}
	s.prompt(0, false)
	return s, nil
}
