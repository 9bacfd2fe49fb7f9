package faulty

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// Session is one fake terminal. It implements backend.Session and
// the optional TryWriter, StdinProber and Syncer, so every path of the
// runtime is reachable.
type Session struct {
	b       *Backend
	ev      backend.Events
	pid     int
	reader  bool
	respond Responder
	spec    messages.SpawnSpec

	queue map[Op][]Fault // guarded by b.mu

	gone     chan struct{} // closed by the first Close: blocked calls end
	goneOnce sync.Once
	wg       sync.WaitGroup // Sync deliveries

	mu         sync.Mutex
	epoch      uint64
	collecting bool
	out        strings.Builder // the current send's output
	scroll     strings.Builder // everything, for Read
	endedAt    int             // scroll's length when the last send ended (Resume)
	promptOK   bool
	promptCode int
	started    bool // the first prompt was printed (a reader then holds the terminal)
	running    bool // a command runs: the foreground program does not wait
	line       []byte
	status     messages.SessionStatus
	exitSent   bool
	switches   uint64
	syncSeq    uint64
	writes     []string
	signals    []messages.Signal
	closes     int
	closed     bool
}

var (
	_ backend.Session     = (*Session)(nil)
	_ backend.TryWriter   = (*Session)(nil)
	_ backend.StdinProber = (*Session)(nil)
	_ backend.Syncer      = (*Session)(nil)
)

// Script queues faults for this session's next calls of op; they are used
// before the backend's. It panics if op cannot express a fault.
func (s *Session) Script(op Op, faults ...Fault) {
	for _, f := range faults {
		f.check(op)
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.queue[op] = append(s.queue[op], faults...)
}

// Spec is what the runtime asked for.
func (s *Session) Spec() messages.SpawnSpec { return s.spec }

// Writes returns the input that reached the terminal, one entry per
// successful write.
func (s *Session) Writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

// Signals returns the signals delivered, in order.
func (s *Session) Signals() []messages.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]messages.Signal(nil), s.signals...)
}

// Closes returns how many times Close was called; Closed whether one
// succeeded.
func (s *Session) Closes() (calls int, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes, s.closed
}

// Emit prints text on the terminal, as a background job would.
func (s *Session) Emit(text string) { s.emit(text, false) }

// Exit ends the shell now with status code.
func (s *Session) Exit(code int) { s.exit(messages.ExitedWith(code)) }

// emit adds output: to scrollback always, to the send while it collects.
func (s *Session) emit(text string, bytewise bool) {
	step := len(text)
	if bytewise {
		step = 1
	}
	for len(text) > 0 {
		n := min(step, len(text))
		s.mu.Lock()
		s.scroll.WriteString(text[:n])
		collecting, epoch := s.collecting, s.epoch
		if collecting {
			s.out.WriteString(text[:n])
		}
		s.mu.Unlock()
		if collecting {
			s.ev.Output(epoch)
		}
		text = text[n:]
	}
}

// prompt ends the running command with code and prints the shell's prompt
// and its verified marker (the shell only: a reader prints no marker).
func (s *Session) prompt(code int, bytewise bool) {
	s.mu.Lock()
	s.running = false
	s.switches++
	reader := s.reader && s.started
	s.started = true
	s.mu.Unlock()
	if reader {
		s.emit("> ", bytewise)
		return
	}
	s.emit("$ ", bytewise)
	s.mu.Lock()
	s.promptOK, s.promptCode = true, code
	epoch := s.epoch
	s.mu.Unlock()
	s.ev.Prompt(backend.PromptFact{Epoch: epoch, ExitCode: code, ShellForeground: true})
}

// exit records the shell's exit and reports it once.
func (s *Session) exit(st messages.SessionStatus) {
	s.mu.Lock()
	if s.exitSent {
		s.mu.Unlock()
		return
	}
	s.exitSent, s.status, s.running = true, st, false
	s.mu.Unlock()
	s.ev.Exited(st)
}

// input applies written bytes: the echo, then an answer per submitted line.
func (s *Session) input(p []byte, bytewise bool) {
	s.mu.Lock()
	s.writes = append(s.writes, string(p))
	s.mu.Unlock()
	s.emit(strings.ReplaceAll(string(p), "\r", "\r\n"), bytewise)
	for _, c := range p {
		if c != '\r' {
			s.mu.Lock()
			s.line = append(s.line, c)
			s.mu.Unlock()
			continue
		}
		s.mu.Lock()
		line := string(s.line)
		s.line = s.line[:0]
		s.running = true
		s.mu.Unlock()
		r := s.respond(line)
		s.emit(r.Output, bytewise)
		if !r.Running {
			s.prompt(r.Code, bytewise)
		}
	}
}

// block waits out a Hang: it returns nil when released, or an error when
// ctx (may be nil) ends or, unless the call is the close itself, the
// session is closed.
func (s *Session) block(ctx context.Context, f Fault, what string) error {
	done := ctx.Done() // nil for Background: never
	gone := s.gone
	if what == "close" {
		gone = nil
	}
	select {
	case <-f.release:
		return nil
	case <-done:
		return fmt.Errorf("faulty: %s abandoned: %w", what, context.Cause(ctx))
	case <-gone:
		return fmt.Errorf("faulty: %s: %w", what, ErrClosed)
	}
}

// PID implements backend.Session.
func (s *Session) PID() int { return s.pid }

// BeginSend implements backend.Session.
func (s *Session) BeginSend() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.out.Reset()
	s.promptOK, s.collecting = false, true
	return s.epoch
}

// Resume implements backend.Session.
func (s *Session) Resume() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Reset()
	s.out.WriteString(s.scroll.String()[min(s.endedAt, s.scroll.Len()):])
	s.collecting = true
	return s.epoch
}

// EndSend implements backend.Session.
func (s *Session) EndSend() messages.SendRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collecting = false
	d := s.out.String()
	s.out.Reset()
	s.endedAt = s.scroll.Len()
	return messages.SendRead{Delta: d, Cursor: uint64(strings.Count(s.scroll.String(), "\n"))}
}

// RearmPrompt implements backend.Session.
func (s *Session) RearmPrompt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.promptOK = false
	return s.epoch
}

// TakeOutput implements backend.Session. Scripted faults: Panic.
func (s *Session) TakeOutput() messages.SendRead {
	if f, ok := s.b.enter(s, OpTakeOutput); ok {
		f.check(OpTakeOutput)
		panic(f.value)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.out.String()
	s.out.Reset()
	return messages.SendRead{Delta: d}
}

// PromptReady implements backend.Session.
func (s *Session) PromptReady() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.promptCode, s.promptOK && !s.running
}

// TryWrite implements backend.TryWriter. It writes everything at once,
// unless a write fault is queued: then it leaves the input to Write, where
// the fault applies. Scripted faults: Fail, Panic.
func (s *Session) TryWrite(p []byte) (int, error) {
	if s.b.pending(s, OpWrite) {
		return 0, nil
	}
	if f, ok := s.b.enter(s, OpTryWrite); ok {
		f.check(OpTryWrite)
		if f.kind == kindPanic {
			panic(f.value)
		}
		return 0, f.err
	}
	if err := s.writable(); err != nil {
		return 0, err
	}
	s.input(p, false)
	return len(p), nil
}

// Write implements backend.Session. Scripted faults: Fail, Hang,
// Exit, Bytewise, OutputAfterExit.
func (s *Session) Write(ctx context.Context, p []byte) error {
	f, ok := s.b.enter(s, OpWrite)
	if ok {
		f.check(OpWrite)
		switch f.kind {
		case kindFail:
			return f.err
		case kindHang:
			if err := s.block(ctx, f, "write"); err != nil {
				return err
			}
		case kindExit:
			s.mu.Lock()
			s.writes = append(s.writes, string(p))
			s.mu.Unlock()
			s.emit(strings.ReplaceAll(string(p), "\r", "\r\n"), false)
			s.exit(messages.ExitedWith(f.code))
			return nil
		case kindOutputAfterExit:
			s.exit(messages.ExitedWith(f.code))
			s.mu.Lock()
			s.writes = append(s.writes, string(p))
			s.mu.Unlock()
			s.emit(strings.ReplaceAll(string(p), "\r", "\r\n"), false)
			return nil
		}
	}
	if err := s.writable(); err != nil {
		return err
	}
	s.input(p, ok && f.kind == kindBytewise)
	return nil
}

// writable refuses input once the shell exited or the session closed, as a
// hung-up terminal does.
func (s *Session) writable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.status.Exited {
		return fmt.Errorf("faulty: write: %w", ErrClosed)
	}
	return nil
}

// Enter implements backend.Session.
func (s *Session) Enter() []byte { return []byte{'\r'} }

// Foreground implements backend.Session: the shell's group, or its
// child's while a command (or the reader) holds the terminal.
func (s *Session) Foreground() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.foreground(), nil
}

func (s *Session) foreground() int {
	if s.running || s.reader && s.started {
		return s.pid + 1
	}
	return s.pid
}

// Signal implements backend.Session. SIGINT ends a running command
// (status 130) and prints a fresh prompt; SIGKILL at the shell is refused.
// Scripted faults: Fail.
func (s *Session) Signal(sig messages.Signal) (messages.SignalResult, error) {
	if f, ok := s.b.enter(s, OpSignal); ok {
		f.check(OpSignal)
		return messages.SignalResult{}, f.err // Fail: the only fault a signal takes
	}
	s.mu.Lock()
	if s.status.Exited || s.closed {
		s.mu.Unlock()
		return messages.SignalResult{}, fmt.Errorf("%w: the shell has exited", messages.ErrNoForeground)
	}
	pgid := s.foreground()
	if sig == messages.SIGKILL && pgid == s.pid {
		s.mu.Unlock()
		return messages.SignalResult{}, messages.ErrRefuseKillShell
	}
	s.signals = append(s.signals, sig)
	s.mu.Unlock()
	if sig == messages.SIGINT {
		// As bash and a REPL do: the running command (or the line being
		// edited) is abandoned and a fresh prompt follows.
		s.emit("^C\r\n", false)
		s.prompt(130, false)
	}
	return messages.SignalResult{Delivered: true, TargetPgid: pgid}, nil
}

// Read implements backend.Session: the whole scrollback as one
// page (paging is not what this backend tests). Scripted faults: Fail,
// Panic.
func (s *Session) Read(int, int) (messages.ReadResult, error) {
	if f, ok := s.b.enter(s, OpRead); ok {
		f.check(OpRead)
		if f.kind == kindPanic {
			panic(f.value)
		}
		return messages.ReadResult{}, f.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.scroll.String()
	lines := strings.Count(text, "\n") + 1
	return messages.ReadResult{Text: text, TotalLines: lines, LineEnd: lines}, nil
}

// ReadSince implements backend.Session: the final lines after cursor and
// the unfinished line, unbounded (the fake keeps everything).
func (s *Session) ReadSince(cursor uint64) (messages.ReadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.scroll.String()
	final := uint64(strings.Count(text, "\n"))
	for i := uint64(0); i < min(cursor, final); i++ {
		text = text[strings.IndexByte(text, '\n')+1:]
	}
	return messages.ReadResult{Text: text, Cursor: final}, nil
}

// Status implements backend.Session.
func (s *Session) Status() messages.SessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// ProbeStdin implements backend.StdinProber: by default the truth (the
// foreground program waits when no command runs). Scripted faults: Fail,
// Hang, Panic, Observe, Unknown.
func (s *Session) ProbeStdin() (backend.StdinObservation, error) {
	if f, ok := s.b.enter(s, OpProbe); ok {
		f.check(OpProbe)
		switch f.kind {
		case kindFail:
			return backend.StdinObservation{}, f.err
		case kindPanic:
			panic(f.value)
		case kindObserve:
			return f.obs, nil
		case kindUnknown:
			s.mu.Lock()
			defer s.mu.Unlock()
			pg := s.foreground()
			return backend.StdinObservation{Supported: true, Pgid: pg, Shell: pg == s.pid, Drained: true}, nil
		case kindHang:
			// A probe has no context: only the release or the close ends it.
			if err := s.block(context.Background(), f, "probe"); err != nil {
				return backend.StdinObservation{}, err
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pg := s.foreground()
	obs := backend.StdinObservation{Supported: true, Pgid: pg, Shell: pg == s.pid, Drained: true, InputConsumed: true}
	if !s.running && !s.status.Exited && !s.closed {
		obs.Waiting = true
		obs.Reader = "bash"
		if pg != s.pid {
			obs.Reader = "reader"
		}
		obs.Waiters = map[int]uint64{pg: s.switches}
	}
	return obs, nil
}

// Sync implements backend.Syncer: output is applied synchronously, so the
// barrier is passed at once (from a goroutine, as Sync must return first).
func (s *Session) Sync() uint64 {
	s.mu.Lock()
	s.syncSeq++
	t := s.syncSeq
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.ev.Synced(t)
	}()
	return t
}

// Close implements backend.Session: the shell (and a running
// command) are killed, and the exit is reported. Scripted faults: Fail,
// Hang; a failed close leaves the session open for the next attempt.
func (s *Session) Close(ctx context.Context, reason string) (messages.CloseReport, error) {
	s.mu.Lock()
	s.closes++
	s.mu.Unlock()
	// Blocked calls end now, as a real terminal's do when its master closes.
	s.goneOnce.Do(func() { close(s.gone) })
	if f, ok := s.b.enter(s, OpClose); ok {
		f.check(OpClose)
		fail := func(err error) (messages.CloseReport, error) {
			return messages.CloseReport{Survivors: []int{s.pid}, Status: s.Status()},
				&messages.CleanupError{Reason: reason, Survivors: []int{s.pid}, Err: err}
		}
		switch f.kind {
		case kindFail:
			return fail(f.err)
		case kindHang:
			if err := s.block(ctx, f, "close"); err != nil {
				return fail(err)
			}
		}
	}
	s.mu.Lock()
	killed := []int{s.pid}
	if s.running {
		killed = []int{s.pid + 1, s.pid}
	}
	if s.status.Exited {
		killed = nil
	}
	s.closed = true
	s.mu.Unlock()
	s.exit(messages.ExitedBySignal("SIGHUP"))
	s.wg.Wait()
	return messages.CloseReport{Killed: killed, Status: s.Status()}, nil
}
