package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creack/pty"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/vt"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/teardown"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// session is one bash in a PTY. Its state is grouped by the lock that
// guards it: what start fixed needs none; the pts handle, the parse (mu),
// the reply writer, the children files and the close each have their own.
type session struct {
	// Fixed once start (and Spawn, before handing the session out) set it.
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
	shell    linux.Identity
	wrapped  bool
	lease    *sandbox.Lease // the sandbox fence hold; released by a successful Close
	orphans  *orphanReaper  // reaps this session's adopted members; nil without adoption
	adoptTag string         // teardown.Options.AdoptTag: SessionTagVar=<tag>, or "" (Subreaper off)
	cfg      messages.Config
	events   backend.Events
	log      zerolog.Logger
	term     linux.Terminal // the fd targets that are this session's terminal
	follow   *waiterCache   // the exact tier's last waiter, followed between probes

	slave ptsHandle // our own handle on the pts, under its own lock

	// Shared between goroutines without a lock.
	//
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
	lineOpen atomic.Bool
	// personInput: the newest input written was a person's (WriteAs), so
	// the line editor may be in any state a person's keys leave it in
	// (an unfinished escape sequence or paste shows no echo): the next
	// send's clear looks for the shell waiting whatever the line shows.
	personInput  atomic.Bool
	masterClosed atomic.Bool   // Close closed the master: the pump's error is expected
	pumpDone     chan struct{} // closed when the pump goroutine returned
	waitDone     chan struct{} // closed when cmd.Wait returned

	// mu guards the parse and what it finds: screen, prompt, epoch, send
	// and exit. The pump parses under it; the runtime's calls read under it.
	mu sync.Mutex
	// screen is the terminal emulator (terminal.go), fed under mu. Its
	// history and screen are the transcript: scrollback, cursor reads and
	// send output (transcript.go).
	screen *vt.Emulator
	prompt *promptTracker // the emulator's observer: finds the prompt marker
	epoch  uint64         // the newest output epoch (BeginSend, RearmPrompt)
	send   sendOutput     // where the current send's output lies in the transcript
	exit   shellExit      // how the shell ended, and whether that was reported

	stream *stream // the numbered events, under their own lock (taken after mu)
	// pictures are the newest drawings, one per amount of scrollback,
	// reused by the viewers that join or jump within pictureReuse (under
	// mu).
	pictures pictureCache
	replies  replyQueue    // answers to terminal queries, under their own lock
	kids     childrenFiles // the children files Leftovers reads, under their own lock
	closing  closeState    // one Close at a time, and its report once done
}

var _ backend.Session = (*session)(nil)

// ptsHandle is our own handle on the pts, only polled or read (the exact
// tier, the input flush, the foreign input check).
type ptsHandle struct {
	mu sync.RWMutex // probes poll fd under RLock; Close closes it under Lock
	fd int          // -1: none
}

// sendOutput is where a send's output lies in the transcript
// (transcript.go), guarded by the session's mu. While collecting, the
// current send's output is the transcript from line from on, that line
// without before, the text before the cursor when the send began (the
// prompt); TakeOutput handed out the lines before taken.
type sendOutput struct {
	collecting bool
	from       int64
	before     string
	taken      int64
	// ended: where the previous send's output ended (the cursor's line
	// and the text before the cursor on it), which a wait resumes from.
	ended struct {
		ok     bool
		line   int64
		before string
	}
}

// shellExit is the shell's end as the session saw it, guarded by the
// session's mu.
type shellExit struct {
	status   messages.SessionStatus
	reported bool // Events.Exited was called
}

// replyQueue holds the answers to the program's terminal queries while
// they wait for the writer goroutine (terminal.go), which runs only while
// some wait. mu is never held across a blocking call: the pump takes it
// under the session's mu.
type replyQueue struct {
	mu         sync.Mutex
	pending    []byte   // at most maxPendingReplies
	to         int      // the foreground group that asked them
	writing    bool     // the writer runs
	stopped    bool     // Close: no more answers
	mute       int      // an interrupted group whose answers are dropped (flushReplies)
	burstAsker int      // the group that asked in this burst of output (asker)
	wake       *os.File // the writer's handle to wait for room on (nil until needed)
	wg         sync.WaitGroup
}

// childrenFiles are the children files Leftovers keeps open
// (leftovers_linux.go), guarded by mu.
type childrenFiles struct {
	mu sync.Mutex
	fd int // the shell's children file (0: not opened yet, -1: none)
	// With adoption (Subreaper), the host's own children file, its last
	// content, and which of those pids carry this session's tag.
	hostFD  int
	host    string
	adopted map[int]bool
}

// closeState makes Close run one at a time and, once it succeeded,
// return its report again.
type closeState struct {
	mu     sync.Mutex
	done   bool
	report messages.CloseReport
}

// start starts cmd (confined's argv) in a PTY and finds the shell in it.
// tag is the session's SessionTagVar value, or "" when the backend does not
// adopt orphans. Cancelling ctx stops waiting for a wrapper to report its
// shell, and stops the process.
func start(ctx context.Context, cmd *exec.Cmd, confined *sandbox.Command, opts Options, cfg messages.Config, nonce, tag string, st *stream, events backend.Events, log zerolog.Logger) (_ *session, err error) {
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
			err = abandonStart(ctx, cmd, master, root, cfg, log, err)
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
		stream:   st,
		// A new session collects for epoch 0, the startup wait, from its
		// first byte.
		send: sendOutput{collecting: true},
	}
	if err := s.attach(opts, tag); err != nil {
		return nil, err
	}
	go s.wait()
	go s.pump()
	return s, nil
}

// attach gives a new session what it reads the terminal with: the
// emulator at the terminal's size, the adoption tag, the terminal's fd
// targets, our own handle on the pts and the exact tier's waiter cache.
// The pump and wait goroutines start after it.
func (s *session) attach(opts Options, tag string) (err error) {
	if s.screen, err = newScreen(int(opts.Rows), int(opts.Cols), s.cfg, s.queueReply, s.prompt); err != nil {
		return err
	}
	// The record's checkpoints take the screen where output and resizes
	// are numbered, under mu (stream.checkpoint).
	s.stream.screen = func() record.Event { return checkpoint(s.screen) }
	if tag != "" && !s.wrapped {
		// A wrapped shell is pid 1 of its pid namespace: nothing of its
		// tree can re-parent to the host. And the wrapper is the host's
		// child with the same tag, which adoption must never take.
		s.adoptTag = SessionTagVar + "=" + tag
	}
	if s.term, err = terminalPaths(s); err != nil {
		return err
	}
	s.slave.fd = openSlave(s.term)
	s.follow = newWaiterCache(s.term)
	return nil
}

// abandonStart undoes a start that failed (err) once the process ran: it
// kills and reaps the started process, closes the master and, once the
// process's identity was known (root), sweeps what it left
// (sweepFailedStart). It returns err, or err beside the sweep's failure.
func abandonStart(ctx context.Context, cmd *exec.Cmd, master *os.File, root linux.Identity, cfg messages.Config, log zerolog.Logger, err error) error {
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_ = master.Close()
	if root.PID != 0 {
		if serr := sweepFailedStart(ctx, root, cfg, log); serr != nil {
			return &messages.BackendCleanupError{SpawnErr: err, CleanupErr: serr}
		}
	}
	return err
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
