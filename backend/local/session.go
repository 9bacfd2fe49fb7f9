package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local/vt"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/teardown"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// pumpBufSize is one read of the master.
const (
	pumpBufSize = 64 << 10
)

// pumpBufs holds the pumps' read buffers between bursts of output. A pump
// takes one when the master turns readable and gives it back when a read
// finds the master empty (EAGAIN), so an idle session, whose pump waits in
// the poller, holds none: hundreds of idle sessions would otherwise pin
// 64 KiB each.
var pumpBufs = sync.Pool{New: func() any { b := make([]byte, pumpBufSize); return &b }}

// pumpBuf is the buffer a pump holds while output flows (nil between
// bursts). Only the pump goroutine touches it.
type pumpBuf struct{ b *[]byte }

func (p *pumpBuf) get() []byte {
	if p.b == nil {
		p.b = pumpBufs.Get().(*[]byte)
	}
	return *p.b
}

// put returns the buffer to the pool. The pump calls it only after every
// byte read into it was consumed: nothing keeps a reference to a chunk
// past consume (the emulator and the prompt tracker copy what they keep).
func (p *pumpBuf) put() {
	if p.b != nil {
		pumpBufs.Put(p.b)
		p.b = nil
	}
}

// session is one bash in a PTY.
type session struct {
	cmd    *exec.Cmd
	master *os.File
	// identity is the process the backend started (cmd): the shell, or
	// the sandbox wrapper that runs it. It leads the PTY's POSIX session.
	identity linux.Identity
	// shell is the shell itself: identity when unwrapped, else the
	// wrapper's child. It is what PID reports and what foreground groups
	// are compared with: an interactive bash makes itself a process group
	// leader and takes the terminal, so under a wrapper the terminal's
	// "shell group" is the shell's pid, not the wrapper's.
	shell   linux.Identity
	wrapped bool
	lease   *sandbox.Lease // the sandbox fence hold; released by a successful Close
	orphans *orphanReaper  // reaps this session's adopted members; nil without adoption
	cfg     messages.Config
	events  backend.Events
	log     zerolog.Logger

	term    linux.Terminal // the fd targets that are this session's terminal
	follow  *waiterCache   // the exact tier's last waiter, followed between probes
	slaveMu sync.RWMutex   // probes poll the slave under RLock; Close closes it under Lock
	slave   int            // our own handle on the pts, only polled (-1: none)

	// readState tells the exact tier whether every byte taken from the
	// master has been parsed: it turns odd just before the pump reads the
	// master and even again once what it read is consumed. The same even
	// value before and after a look, with the master empty in between,
	// proves that no read was in flight and none began: the viewport holds
	// everything the program wrote before it.
	readState atomic.Uint64
	// lineOpen: the newest input written for a send did not end its line
	// (no Enter, newline or ^C last), so what the shell's line editor
	// holds is the caller's own (see ClearForeignInput).
	lineOpen     atomic.Bool
	masterClosed atomic.Bool // Close closed the master: the pump's error is expected

	pumpDone chan struct{} // closed when the pump goroutine returned
	waitDone chan struct{} // closed when cmd.Wait returned

	// mu guards everything below: the pump parses under it; the runtime's
	// calls read under it.
	mu     sync.Mutex
	prompt *promptTracker // the emulator's observer: finds the prompt marker
	epoch  uint64
	// collecting: a send takes output (transcript.go). The current send's
	// output is the transcript from line sendFrom on, that line without
	// sendBefore, the text before the cursor when the send began (the
	// prompt); TakeOutput handed out the lines before taken.
	collecting bool
	sendFrom   int64
	sendBefore string
	taken      int64
	// ended: where the previous send's output ended (the cursor's line
	// and the text before the cursor on it), which a wait resumes from.
	ended struct {
		ok     bool
		line   int64
		before string
	}
	status   messages.SessionStatus
	exitAt   time.Time // when Wait returned; zero while running
	exitSent bool

	// screen is the terminal emulator (terminal.go), fed under mu. Its
	// history and screen are the transcript: scrollback, cursor reads and
	// send output (transcript.go).
	screen *vt.Emulator
	// Answers to the program's terminal queries wait here for the writer
	// goroutine (terminal.go), which runs only while some wait. replyMu
	// is never held across a blocking call: the pump takes it under mu.
	replyMu    sync.Mutex
	replies    []byte   // at most maxPendingReplies
	replyTo    int      // the foreground group that asked them
	replying   bool     // the writer runs
	replyStop  bool     // Close: no more answers
	replyMute  int      // an interrupted group whose answers are dropped (flushReplies)
	burstAsker int      // the group that asked in this burst of output (asker)
	replyWake  *os.File // the writer's handle to wait for room on (nil until needed)
	replyWG    sync.WaitGroup

	// kidsFD holds the shell's children file open for Leftovers (0: not
	// opened yet, -1: none).
	kidsMu sync.Mutex
	kidsFD int
	// With adoption (Subreaper), the host's own children file, its last
	// content, and which of those pids carry this session's tag.
	hostKidsFD int
	hostKids   string
	adopted    map[int]bool

	closeMu  sync.Mutex // one close at a time
	closed   bool
	report   messages.CloseReport
	adoptTag string // teardown.Options.AdoptTag: SessionTagVar=<tag>, or "" (Subreaper off)
}

var _ backend.Session = (*session)(nil)

// start starts cmd (confined's argv) in a PTY and finds the shell in it.
// tag is the session's SessionTagVar value, or "" when the backend does not
// adopt orphans. Cancelling ctx stops waiting for a wrapper to report its
// shell, and stops the process.
func start(ctx context.Context, cmd *exec.Cmd, confined *sandbox.Command, opts Options, cfg messages.Config, nonce, tag string, events backend.Events, log zerolog.Logger) (_ *session, err error) {
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: opts.Rows, Cols: opts.Cols})
	// The child has its copies of the extra files (the wrapper's report
	// pipe); ours must go, so a wrapper that dies is seen as end of file.
	for _, f := range cmd.ExtraFiles {
		_ = f.Close()
	}
	if err != nil {
		return nil, err
	}
	var root linux.Identity // the started process, once its identity is known
	defer func() {
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			_ = master.Close()
			if root.PID != 0 {
				if serr := sweepFailedStart(ctx, root, cfg, log); serr != nil {
					err = &messages.BackendCleanupError{SpawnErr: err, CleanupErr: serr}
				}
			}
		}
	}()
	// pty.Start left the master in blocking mode (it called Fd). Make it
	// non-blocking once, through SyscallConn, so reads go through the
	// runtime poller: Close then interrupts a pending Read and deadlines
	// work. Nothing may call master.Fd() after this.
	if err := control(master, func(fd int) error { return unix.SetNonblock(fd, true) }); err != nil {
		return nil, fmt.Errorf("set non-blocking: %w", err)
	}
	// Through teardown's process table: /proc on Linux, sysctl on macOS.
	id, err := teardown.Identify(cmd.Process.Pid)
	if err != nil {
		return nil, fmt.Errorf("read shell identity: %w", err)
	}
	root = id
	shell, err := findShell(ctx, confined, root, master)
	if err != nil {
		return nil, err
	}
	s := &session{
		cmd:      cmd,
		master:   master,
		identity: root,
		shell:    shell,
		wrapped:  confined.Wrapped(),
		cfg:      cfg,
		events:   events,
		log:      log,
		pumpDone: make(chan struct{}),
		waitDone: make(chan struct{}),
		prompt:   newPromptTracker(nonce),
		// A new session collects for epoch 0, the startup wait, from its
		// first byte.
		collecting: true,
	}
	if s.screen, err = newScreen(int(opts.Rows), int(opts.Cols), cfg, s.queueReply, s.prompt); err != nil {
		return nil, err
	}
	if tag != "" && !s.wrapped {
		// A wrapped shell is pid 1 of its pid namespace: nothing of its
		// tree can re-parent to the host. And the wrapper is the host's
		// child with the same tag, which adoption must never take.
		s.adoptTag = SessionTagVar + "=" + tag
	}
	if s.term, err = terminalPaths(s); err != nil {
		return nil, err
	}
	s.slave = openSlave(s.term)
	s.follow = newWaiterCache(s.term)
	go s.wait()
	go s.pump()
	return s, nil
}

// sweepFailedStart empties the terminal's session after a start that
// failed once the process ran: a wrapper killed before it reported leaves
// its sandbox to die on its own (the kernel kills the sandbox's pid 1 when
// the wrapper dies, but not before the wrapper's reaping returns). The
// start's context may be the reason it failed, so the sweep has its own
// bound.
func sweepFailedStart(ctx context.Context, root linux.Identity, cfg messages.Config, log zerolog.Logger) error {
	grace := messages.Ms(cfg.DisposeGraceMs)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*grace+time.Second)
	defer cancel()
	_, err := teardown.Tree(sctx, root, teardown.Options{Grace: grace, Log: log, RootReaped: true})
	return err
}

// control runs f on the master's fd without switching it to blocking mode
// (as File.Fd would).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// PID is the shell's host pid (inside a sandbox: the wrapper's child).
func (s *session) PID() int { return s.shell.PID }

// findShell returns the shell's identity: root's own when confined does not
// wrap, else the pid the wrapper reports, which must belong to root's
// POSIX session (the PTY's), or it is not the terminal's shell.
func findShell(ctx context.Context, confined *sandbox.Command, root linux.Identity, master *os.File) (linux.Identity, error) {
	if !confined.Wrapped() {
		return root, nil
	}
	pid, err := confined.Shell(ctx, root.PID)
	if err != nil {
		if out := earlyOutput(master); out != "" {
			// The wrapper's own complaint (a bwrap error) went to the PTY.
			err = fmt.Errorf("%w; it wrote: %q", err, out)
		}
		return linux.Identity{}, err
	}
	st, err := linux.ReadStat(linux.FS{}, pid)
	if err != nil {
		return linux.Identity{}, fmt.Errorf("read sandboxed shell %d: %w", pid, err)
	}
	if st.Session != root.PID {
		return linux.Identity{}, fmt.Errorf("sandboxed shell %d is in session %d, not the terminal's (%d)", pid, st.Session, root.PID)
	}
	return st.Identity(), nil
}

// earlyOutput returns what the terminal holds now (at most a few KiB),
// without waiting, as printable text. Only for error messages of a start
// that failed before the pump runs.
func earlyOutput(master *os.File) string {
	buf := make([]byte, 4096)
	var n int
	_ = control(master, func(fd int) error {
		for n < len(buf) {
			m, err := unix.Read(fd, buf[n:])
			if m <= 0 || err != nil {
				return nil
			}
			n += m
		}
		return nil
	})
	out := strings.Map(func(r rune) rune {
		if r == '\n' || r >= ' ' && r != 0x7f {
			return r
		}
		return -1
	}, strings.ToValidUTF8(string(buf[:n]), "?"))
	return strings.TrimSpace(out)
}

// wait reaps the shell and starts the exit drain.
func (s *session) wait() {
	awaitExit(s.cmd.Process.Pid)
	err := s.cmd.Wait()
	st := messages.ExitedWith(0)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st = messages.ExitedBySignal(unix.SignalName(ws.Signal()))
		} else {
			st = messages.ExitedWith(ee.ExitCode())
		}
	} else if err != nil {
		s.log.Warn().Err(err).Msg("wait for shell")
		st = messages.SessionStatus{Exited: true}
	}
	s.mu.Lock()
	s.status = st
	s.exitAt = time.Now()
	s.mu.Unlock()
	close(s.waitDone)
	// Wake the pump: it drains what the shell wrote before exiting and
	// reports the exit.
	s.poke()
}

// pump reads the master until EOF (EIO on Linux once every slave holder is
// gone) or Close, parsing under mu. It is also the barrier behind the exit
// report: a poke (an expired read deadline) makes it finish the chunk it
// holds, drain everything still available, and only then report.
func (s *session) pump() {
	defer close(s.pumpDone)
	var buf pumpBuf
	defer buf.put()
	rc, err := s.master.SyscallConn()
	for err == nil {
		var n int
		n, err = s.readMaster(rc, &buf)
		if n > 0 {
			s.consume(buf.get()[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if s.onPoke(&buf) {
				err = nil
				continue
			}
			err = io.EOF
		}
	}
	if !isEOF(err) && !errors.Is(err, os.ErrClosed) && !s.masterClosed.Load() {
		s.log.Warn().Err(err).Msg("read PTY master")
	}
	<-s.waitDone
	s.reportExit()
}

// readMaster waits for output and reads one chunk through the runtime
// poller into buf, which holds the chunk when it returns bytes. It leaves
// readState odd when it returns bytes; consume makes it even. The buffer
// goes back to the pool while the pump waits.
func (s *session) readMaster(rc syscall.RawConn, buf *pumpBuf) (int, error) {
	var n int
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		for {
			p := buf.get()
			s.readState.Add(1)
			n, rerr = unix.Read(int(fd), p)
			if n > 0 {
				return true
			}
			s.readState.Add(1)
			switch rerr {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				buf.put()
				s.noteQuiet(int(fd))
				return false // wait in the poller
			case nil:
				rerr = io.EOF
			}
			n = 0
			return true
		}
	})
	if err != nil {
		return 0, err
	}
	return n, rerr
}

// poke wakes the pump out of its read. The request flags are set before
// the deadline, and the pump clears the deadline before taking the flags,
// so no request is lost between the two.
func (s *session) poke() { _ = s.master.SetReadDeadline(time.Now()) }

// onPoke drains what is available and answers pending requests. It reports
// false when the master reached end of file while draining.
func (s *session) onPoke(buf *pumpBuf) bool {
	_ = s.master.SetReadDeadline(time.Time{})
	open := s.drainAvailable(buf)
	if open && s.exited() {
		s.reportExit()
	}
	return open
}

// drainAvailable reads, without waiting, until the master has nothing
// more. A read that finds the line discipline empty flushes the PTY's
// pending work first, so bytes the program wrote before this call are all
// read here. It reports false at end of file.
func (s *session) drainAvailable(buf *pumpBuf) bool {
	for {
		var n int
		var rerr error
		p := buf.get()
		// Control, not RawConn.Read: a poke that sets a new deadline must
		// not cut this drain short (the poller would refuse the read).
		s.readState.Add(1)
		err := control(s.master, func(fd int) error {
			n, rerr = unix.Read(fd, p)
			return nil
		})
		if err == nil && n > 0 {
			s.consume(p[:n])
			continue
		}
		s.readState.Add(1)
		if err != nil {
			return !errors.Is(err, os.ErrClosed)
		}
		switch {
		case rerr == unix.EINTR:
			continue
		case rerr == unix.EAGAIN:
			buf.put()
			_ = control(s.master, func(fd int) error { s.noteQuiet(fd); return nil })
			return true
		case rerr == nil || isEOF(rerr):
			return false // end of file
		default:
			s.log.Warn().Err(rerr).Msg("drain PTY master")
			return true
		}
	}
}

// isEOF normalizes end of output: Linux reports a hung-up PTY master as EIO.
// This is the one place that knows.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)
}

func (s *session) reportExit() {
	s.mu.Lock()
	if s.exitSent {
		s.mu.Unlock()
		return
	}
	s.exitSent = true
	st := s.status
	s.mu.Unlock()
	s.events.Exited(st)
}

// consume parses one chunk read from the master, ends that read (readState
// even) and reports facts. Output is reported before a prompt so a send that
// settles on the prompt already holds its output.
func (s *session) consume(p []byte) {
	s.mu.Lock()
	s.feed(p)
	collecting, epoch := s.collecting, s.epoch
	var fact *backend.PromptFact
	if s.prompt.complete() && !s.prompt.reported {
		s.prompt.reported = true
		fact = &backend.PromptFact{Epoch: s.epoch, ExitCode: s.prompt.code}
	}
	s.mu.Unlock()
	// Parsed: the read is over for the exact tier's drained check, which
	// may run inside the facts below (the runtime carries them, and a
	// probe, on this goroutine).
	s.readState.Add(1)
	if collecting {
		s.events.Output(epoch)
	}
	if fact != nil {
		fact.ShellForeground = s.shellForeground()
		s.events.Prompt(*fact)
	}
}

// feed takes one chunk under mu. The emulator is the one parser: it
// draws the screen and the transcript, answers queries, and hands the
// prompt tracker the OSC payloads and, while it is armed, the text after
// them.
func (s *session) feed(p []byte) { s.screen.Feed(p) }

func (s *session) shellForeground() bool {
	pgid, err := s.Foreground()
	return err == nil && pgid == s.PID()
}

func (s *session) BeginSend() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.prompt.reset()
	s.collect()
	return s.epoch
}

func (s *session) Resume() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.ok {
		s.collect()
		return s.epoch
	}
	// From where the previous send's output ended: what was printed since
	// is the wait's, and what that send showed is not shown again.
	s.sendFrom, s.sendBefore, s.taken = s.ended.line, s.ended.before, s.ended.line
	s.collecting = true
	return s.epoch
}

func (s *session) RearmPrompt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.prompt.reset()
	return s.epoch
}

func (s *session) EndSend() messages.SendRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collecting = false
	r := s.endOutput()
	index, before := s.screen.CursorLine()
	s.ended.ok, s.ended.line, s.ended.before = true, s.screen.FinalLines()+int64(index), before
	return r
}

func (s *session) TakeOutput() messages.SendRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeOutput()
}

func (s *session) PromptReady() (int, bool) {
	s.mu.Lock()
	ok, code := s.prompt.complete(), s.prompt.code
	s.mu.Unlock()
	if !ok || !s.shellForeground() {
		return 0, false
	}
	return code, true
}

func (s *session) Enter() []byte { return []byte{'\r'} }

func (s *session) Write(ctx context.Context, p []byte) error {
	s.unmuteReplies()
	s.noteInput(p)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = s.master.SetWriteDeadline(time.Now())
		close(fired)
	})
	_, err := s.master.Write(p)
	if !stop() {
		// The callback started: wait until it set its deadline before
		// clearing it, or a late deadline would fail the next write.
		<-fired
		_ = s.master.SetWriteDeadline(time.Time{})
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
	return err
}

// noteInput records whether a send's input left its line open.
func (s *session) noteInput(p []byte) {
	if len(p) == 0 {
		return
	}
	switch p[len(p)-1] {
	case '\r', '\n', 0x03:
		s.lineOpen.Store(false)
	default:
		s.lineOpen.Store(true)
	}
}

// TryWrite writes what the PTY accepts without waiting: the master is
// non-blocking, and returning true from the raw-write callback tells the
// poller not to wait for writability.
func (s *session) TryWrite(p []byte) (int, error) {
	s.unmuteReplies()
	s.noteInput(p)
	rc, err := s.master.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, e := unix.Write(int(fd), p[n:])
			if m > 0 {
				n += m
			}
			if e == unix.EINTR {
				continue
			}
			if e != nil {
				if e != unix.EAGAIN {
					werr = e
				}
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return n, err
}

func (s *session) Foreground() (int, error) {
	var pgid int
	err := control(s.master, func(fd int) error {
		var err error
		pgid, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	if err != nil || pgid <= 0 {
		return 0, fmt.Errorf("%w for terminal %d: %v", messages.ErrNoForeground, s.PID(), err)
	}
	return pgid, nil
}

var signalNumbers = map[messages.Signal]unix.Signal{
	messages.SIGINT:  unix.SIGINT,
	messages.SIGTERM: unix.SIGTERM,
	messages.SIGKILL: unix.SIGKILL,
	messages.SIGTSTP: unix.SIGTSTP,
	messages.SIGHUP:  unix.SIGHUP,
}

func (s *session) Signal(sig messages.Signal) (messages.SignalResult, error) {
	num, ok := signalNumbers[sig]
	if !ok {
		return messages.SignalResult{}, messages.InvalidArgument("unsupported signal %q", sig)
	}
	// The group resolved a moment ago may exit before the signal lands
	// (ESRCH): the terminal then has a new foreground group, which is the
	// one the caller means. Resolve again, a few times at most.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var pgid int
		pgid, err = s.Foreground()
		if err != nil {
			return messages.SignalResult{}, err
		}
		// Under a wrapper, the wrapper's group holds the terminal until
		// the shell takes it; killing it would kill the shell too.
		if num == unix.SIGKILL && (pgid == s.PID() || pgid == s.identity.PID) {
			return messages.SignalResult{}, messages.ErrRefuseKillShell
		}
		var dropped string
		if dropped, err = s.signalGroup(pgid, num); err == nil {
			return messages.SignalResult{Delivered: dropped == "", TargetPgid: pgid, Reason: dropped}, nil
		}
		if !errors.Is(err, unix.ESRCH) {
			return messages.SignalResult{}, fmt.Errorf("%w: kill(-%d, %s): %w", messages.ErrTransport, pgid, sig, err)
		}
		err = fmt.Errorf("%w: group %d of terminal %d exited before %s landed and the shell has not taken the terminal back yet: %w",
			messages.ErrNoForeground, pgid, s.PID(), sig, err)
	}
	// The group is gone and the terminal still names it: there is no
	// program to signal, which the caller may retry; never a guess.
	return messages.SignalResult{}, err
}

// signalGroup sends num to the foreground group pgid so that it reaches
// the command's program, not the shell's code the command's process runs
// until its exec. dropped is non-empty when the kernel drops the signal for
// a member of the group (see initDrop): it says which and why.
func (s *session) signalGroup(pgid int, num unix.Signal) (dropped string, err error) {
	var child preExec
	if num != unix.SIGKILL {
		// A command the shell forked a moment ago would lose the signal
		// to the shell's handlers until it execs.
		child = s.awaitExec(pgid)
	}
	// Read before the kill: a pid 1 the signal does reach may be gone
	// after it. It is sent all the same: the group's other members take
	// it, and a handler installed meanwhile would too.
	dropped = s.initDrop(pgid, num)
	if num == unix.SIGINT {
		// What the terminal does for ^C: input not read yet goes with the
		// interrupt, or a line editor that drops the line it holds would
		// then read and run the rest of it.
		s.flushInput(pgid)
	}
	if err := unix.Kill(-pgid, num); err != nil {
		return "", err
	}
	// awaitExec cannot tell every child still on its way to its exec from
	// a subshell: one that took the signal in the shell's handlers and
	// then exec'd gets it again.
	s.redeliver(child, pgid, num)
	return dropped, nil
}

func (s *session) ReadSince(cursor uint64) (messages.ReadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.view()
	return v.Since(cursor, s.cfg.MaxReadBytes), nil
}

func (s *session) Read(offset, count int) (messages.ReadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.view()
	return v.Page(offset, count, s.cfg.MaxReadBytes), nil
}

func (s *session) Status() messages.SessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Close tears the tree down: every descendant and member of the shell's
// session first (teardown.Tree: TERM, grace, rescan, KILL, verify), then the
// shell (HUP and TERM, grace, KILL), then a sweep of what the shell left in
// its session, then the terminal. With Options.Subreaper, both passes also
// take the orphans the host adopted that carry the session's tag, and reap
// them. A failed close leaves what survived running and may be retried.
func (s *session) Close(ctx context.Context, reason string) (messages.CloseReport, error) {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return s.report, nil
	}
	opts := teardown.Options{Grace: messages.Ms(s.cfg.DisposeGraceMs), Log: s.log, AdoptTag: s.adoptTag}
	report := messages.CloseReport{}
	fail := func(survivors []int, err error) (messages.CloseReport, error) {
		report.Survivors = survivors
		return report, &messages.CleanupError{Reason: reason, Survivors: survivors, Err: err}
	}
	if !s.exited() {
		// The shell's tree. Under a wrapper the shell is pid 1 of the
		// sandbox's pid namespace, so this is the whole sandbox, orphans
		// included. A wrapped shell that exited by itself a moment ago was
		// reaped by the wrapper (ErrRootChanged): the kernel killed its
		// namespace with it, and the sweep below checks.
		tr, err := teardown.Tree(ctx, s.shell, opts)
		report.Killed = append(report.Killed, tr.Killed...)
		if err != nil && !(s.wrapped && errors.Is(err, teardown.ErrRootChanged)) {
			return fail(tr.Survivors, err)
		}
		if err := s.stopShell(ctx, opts.Grace); err != nil {
			return fail(append(tr.Survivors, s.PID()), err)
		}
		report.Killed = append(report.Killed, s.PID())
	}
	// The shell (and its wrapper) is gone and reaped. Sweep the terminal's
	// session by session id (the started process leads it): jobs
	// it left when it exited by itself, anything forked between the pass
	// above and its death, and (with a subreaper host) the killed members
	// it had not reaped, which re-parented to the host as zombies.
	opts.RootReaped = true
	tr, err := teardown.Tree(ctx, s.identity, opts)
	report.Killed = append(report.Killed, tr.Killed...)
	if err != nil {
		return fail(tr.Survivors, err)
	}
	// Every holder of the slave is gone, so the pump sees EIO and returns;
	// closing the master also interrupts it if a straggler held the slave.
	s.slaveMu.Lock()
	closeSlave(s.slave)
	s.slave = -1
	s.slaveMu.Unlock()
	s.follow.Close()
	s.closeLeftovers()
	s.masterClosed.Store(true)
	_ = s.master.Close()
	s.stopReplies()
	s.replyWG.Wait()
	<-s.pumpDone
	s.closed = true
	report.Status = s.Status()
	s.report = report
	// Nothing started under this session's sandbox runs any more: the
	// owner's mode may change.
	s.lease.Release()
	if s.orphans != nil {
		s.orphans.remove(s.PID())
	}
	return report, nil
}

func (s *session) exited() bool {
	select {
	case <-s.waitDone:
		return true
	default:
		return false
	}
}

// stopShell ends the shell. An interactive bash ignores TERM, so HUP (what a
// terminal hang-up sends) goes first; TERM follows for other shells, then
// KILL after the grace. The started process's pid cannot be recycled before
// Wait reaps it, so signalling it directly is safe. A wrapped shell is the
// wrapper's child, reaped by the wrapper, so it is signalled by identity
// (pidfd); the wrapper exits when it does. As pid 1 of its namespace it
// gets only signals it handles (bash handles HUP) and SIGKILL.
func (s *session) stopShell(ctx context.Context, grace time.Duration) error {
	p := s.cmd.Process
	signal := func(sig unix.Signal) {
		if s.wrapped {
			_ = teardown.ProcSignaler{}.Signal(s.shell, sig)
			return
		}
		_ = p.Signal(sig)
	}
	signal(unix.SIGHUP)
	signal(unix.SIGTERM)
	signal(unix.SIGCONT)
	if s.waitFor(ctx, grace) {
		return nil
	}
	signal(unix.SIGKILL)
	if s.wrapped {
		_ = p.Signal(unix.SIGKILL)
	}
	if s.waitFor(ctx, grace) {
		return nil
	}
	return fmt.Errorf("shell %d did not exit after SIGKILL", s.PID())
}

func (s *session) waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.waitDone:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}
