package backend

import (
	"context"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// Backend starts sessions of one type. Backends report facts (output pending,
// prompt marker, exit) through Events; the runtime alone decides when a send
// settles. A backend never imports the runtime.
type Backend interface {
	// Type is the non-empty backend type name, e.g. "shell".
	Type() string
	// Spawn starts the session's process and returns as soon as it runs; the
	// runtime's startup send waits for readiness. Cancelling ctx aborts the
	// start: a backend that already started a process stops it before
	// returning, and returns *BackendCleanupError if that fails. cfg is the
	// validated runtime configuration.
	Spawn(ctx context.Context, spec messages.SpawnSpec, cfg messages.Config, events Events) (Session, error)
}

// Events receives a session's facts. Implementations must not block: the
// backend calls them from its output pump.
type Events interface {
	// Output says output for the send of epoch was collected (see
	// TakeOutput). It is called after each chunk while a send collects,
	// never otherwise.
	Output(epoch uint64)
	// Prompt says a verified prompt marker (right nonce, followed exactly by
	// the controlled prompt) completed after the write of epoch Epoch.
	Prompt(PromptFact)
	// Exited says the top-level shell exited and the output it wrote before
	// exiting has been parsed. Called once.
	Exited(messages.SessionStatus)
	// Synced answers Syncer.Sync: everything the terminal held when Sync was
	// called has been read and parsed.
	Synced(token uint64)
}

// Syncer is an optional Session capability: a barrier through the
// output path, so a readiness decision made from process state is applied
// only once the output written before it has reached the send. A backend
// whose StdinObservation.Drained already proves that (the local backend
// does) need not implement it; one whose Drained only says "nothing is
// pending on the terminal" must.
type Syncer interface {
	// Sync returns at once; Events.Synced(token) follows when every byte
	// the terminal held at the call has been read and parsed.
	Sync() (token uint64)
}

// PromptFact is a prompt marker that met the nonce and prompt-tail rules.
type PromptFact struct {
	Epoch    uint64 // the BeginSend epoch the marker belongs to
	ExitCode int    // the last command's exit status carried by the marker
	// ShellForeground: the terminal's foreground group was the shell's when
	// the prompt completed. When false, the runtime waits for the hand-back
	// with PromptReady.
	ShellForeground bool
}

// TryWriter is an optional Session capability: a write attempt that
// never blocks. The runtime uses it to write small input inline and falls
// back to Write, in a goroutine, for whatever remains.
type TryWriter interface {
	// TryWrite writes as much of p as the terminal accepts now and returns
	// how much that was; it never waits.
	TryWrite(p []byte) (int, error)
}

// PersonWriter is an optional Session capability: input a person types
// while they hold the session's input (a console's take-over), written
// like Write and recorded with its source (record.SourceOperator, or
// record.SourceHuman and the person's label). It is never the agent's
// own unfinished line: what it leaves in a line editor is foreign input
// to the agent's next send.
type PersonWriter interface {
	// WriteAs writes p as Write does; secret reports that the terminal
	// read with echo off when it was written (a password prompt), so
	// the runtime keeps only its length.
	WriteAs(ctx context.Context, source string, p []byte) (secret bool, err error)
}

// ForeignInputClearer is an optional Session capability: it discards
// input that waits for the shell at its prompt and that no send wrote (a
// terminal's answers to queries in a file someone cat'ed, bytes a program
// pushed with TIOCSTI), so that the next send's line runs as written.
type ForeignInputClearer interface {
	// ClearForeignInput runs before a send's input is written. When the
	// shell waits at its prompt with input the previous send did not
	// leave there, it takes that input from the terminal's queue and
	// returns it, with the keys that empty the line editor's buffer, to be
	// written first. The keys need the kernel's proof that the shell
	// itself waits for input with nothing left to read and its echo
	// parsed: a shell still taking the foreign input (its line editor
	// between two reads) holds some of it where no queue shows it. Until
	// that is proven it reports busy, with what it took so far: the
	// caller writes nothing yet and asks again a moment later with retry
	// set (which looks for the proof even when nothing is left to take),
	// until it is not busy. Otherwise it returns nothing; it never waits.
	ClearForeignInput(retry bool) (foreign string, keys []byte, busy bool)
}

// ShellWaker is an optional Session capability: it interrupts the
// shell's own wait for input with a signal it handles and ignores
// (SIGWINCH), so a signal it took but has not acted on yet is acted on
// now. Bash acts on a SIGINT that lands while its line editor takes typed
// ahead input only when a later read is interrupted, or once it reads the
// next line, whose first character it then drops ("bash: cho: command not
// found" for "echo ok"); a send cancelled at that moment wakes the shell,
// which then prints its prompt.
type ShellWaker interface {
	WakeShell() error
}

// StdinProber is an optional Session capability: the exact tier. It
// observes, from the kernel, whether the terminal's foreground program is
// blocked reading the terminal.
type StdinProber interface {
	// ProbeStdin observes the foreground group now. It must return within
	// a bounded time (it reads process state; it never waits).
	ProbeStdin() (StdinObservation, error)
}

// StdinObservation is one look at the terminal's foreground group.
type StdinObservation struct {
	// Supported is false where the platform or architecture has no exact
	// tier; the runtime then stops probing.
	Supported bool
	Pgid      int  // the terminal's foreground process group
	Shell     bool // the foreground group is the shell's own
	// Waiting: a thread of the group is blocked reading the terminal
	// (read, select/poll or epoll on the pts or /dev/tty).
	Waiting bool
	Reader  string // command name of the waiting process
	// ReaderTID is the waiting thread (a key of Waiters).
	ReaderTID int
	// InputSeq is the number of the newest input event in the session's
	// stream when the look began (zero without a stream): a wait seen
	// again with the same thread and no input since is the same wait.
	InputSeq uint64
	// Waiters maps each waiting thread id to its voluntary context switch
	// count, so a wait left and re-entered between two looks is visible.
	Waiters map[int]uint64
	// Drained: no output is pending on the terminal's master and every
	// read of it has been parsed, so the viewport is complete (see Syncer
	// for a backend that cannot tell the second part).
	Drained bool
	// EventLoop: every waiting thread waits in epoll, with the terminal in
	// its interest list. An event loop may keep a terminal registered after
	// it stopped reading it (libuv removes fds lazily: node after .exit),
	// so this evidence must hold for a moment before it counts.
	EventLoop bool
	// InputConsumed: nothing written to the terminal waits to be read by
	// the program (the terminal's input queue is empty). With Waiting, it
	// proves the wait is not the one from before the write: the program's
	// read returned the input and it blocked again.
	InputConsumed bool
	// WaitTimeout, with HasWaitTimeout: the waiting thread's call has its
	// own timeout (poll, select, epoll), after which it resumes by itself,
	// as vim does after an Escape to see whether a key code follows.
	WaitTimeout    time.Duration
	HasWaitTimeout bool
	// Secret: with Waiting, the terminal reads in canonical mode with echo
	// off (ICANON on, ECHO off), as getpass, read -s, sudo, ssh and
	// openssl set it to read a password. Line editors, REPLs and
	// full-screen programs run with ICANON off and are never secret.
	Secret bool
}

// Terminal is an optional Session capability: the session is a terminal
// emulator as well as a PTY, so it can show its screen, be resized, and
// encode keys for the program reading it.
type Terminal interface {
	// Screen returns what the terminal shows now.
	Screen() messages.Screen
	// Resize sets the terminal's size (TIOCSWINSZ: the foreground group
	// gets SIGWINCH) and the screen follows. A size out of range is an
	// error wrapping messages.ErrInvalidArgument.
	Resize(rows, cols int) error
	// InputModes reports the modes key and paste encoding depend on:
	// application cursor keys, bracketed paste; and whether a full-screen
	// program shows the alternate screen. Cheap: no screen is built.
	InputModes() (appCursor, bracketedPaste, altScreen bool)
}

// OutputPeeker is an optional Session capability: the send's output that
// TakeOutput has not handed out yet, the lines the cursor is still on
// included (a prompt without a newline), without taking it. A wait's
// pattern is matched against it.
type OutputPeeker interface {
	PeekOutput() string
}

// LeftoverLister is an optional Session capability: which processes the
// shell's commands left running, for the receipt of a send that returned
// at the prompt. It runs on every such settlement, so it must cost about
// one system call when nothing was left.
type LeftoverLister interface {
	// Leftovers lists them now; starting reports a child that has not yet
	// run its own program (a job the shell forked an instant ago), whose
	// name is still the shell's.
	Leftovers() (procs []messages.Process, starting bool)
	// AwaitLeftovers waits, bounded, until starting children run their
	// programs, and lists again. It may block: the runtime calls it from
	// a goroutine.
	AwaitLeftovers() []messages.Process
}

// Session is one live terminal. Methods other than Write, Close and
// Signal must return promptly; they are called from actor mailboxes. Write,
// Close and Signal run in goroutines the actors own (Signal may wait a
// moment for a freshly forked command to exec).
type Session interface {
	// PID is the shell: the process whose prompt the runtime reads and whose
	// group owns the terminal between commands (under a sandbox wrapper,
	// the shell the wrapper started, not the wrapper).
	PID() int
	// BeginSend starts a new send epoch: it drops prompt evidence and
	// pending output from before, and collects output for the new send.
	// A new session collects for epoch 0 (the startup wait) from its first
	// byte, so the runtime does not call BeginSend for the startup wait.
	BeginSend() (epoch uint64)
	// Resume collects output again for the current epoch, keeping its
	// prompt evidence: a wait (a send that writes nothing) continues where
	// the previous send left off, so a prompt that completed since it
	// settled is not lost, and its output starts where the previous send's
	// output ended (what was printed in between is the wait's; what the
	// previous result showed is not shown again).
	Resume() (epoch uint64)
	// EndSend stops collecting output for the current send and returns
	// what was collected since the last TakeOutput; later output reaches
	// only scrollback.
	EndSend() messages.SendRead
	// RearmPrompt drops the current prompt evidence and starts a new epoch
	// for prompt facts, keeping the output collected so far. The runtime
	// calls it right before interrupting a send, so only a prompt that
	// completes after the signal settles it (and a late post-interrupt
	// prompt is never credited to the next send).
	RearmPrompt() (epoch uint64)
	// TakeOutput returns the output collected since the previous call.
	TakeOutput() messages.SendRead
	// PromptReady re-checks the current epoch's prompt evidence and whether
	// the shell is the foreground group again.
	PromptReady() (exitCode int, ok bool)
	// Write writes p to the terminal. Cancelling ctx abandons a write that
	// has not completed; the error then wraps context.Cause(ctx).
	Write(ctx context.Context, p []byte) error
	// Enter is the platform's submit sequence.
	Enter() []byte
	// Foreground resolves the terminal's foreground process group now.
	Foreground() (pgid int, err error)
	// Signal resolves the foreground group and signals it; SIGKILL is refused
	// when that group is the shell's.
	Signal(sig messages.Signal) (messages.SignalResult, error)
	// Read pages retained scrollback: count lines, offset lines back from
	// the newest. The runtime passes them resolved and in range
	// (messages.ReadRequest.Resolve); a backend need not check them again.
	Read(offset, count int) (messages.ReadResult, error)
	// ReadSince reads forward from a cursor (messages.ReadRequest.Cursor):
	// the retained final lines at or after it, then the unfinished line,
	// with the next cursor, the omitted range and More.
	ReadSince(cursor uint64) (messages.ReadResult, error)
	// Status is the shell's current status.
	Status() messages.SessionStatus
	// Close tears the session's process tree down and reports what it
	// killed. On failure it returns *CleanupError and may be called again.
	Close(ctx context.Context, reason string) (messages.CloseReport, error)
}

// Watchable is a session a person can watch live: its stream's events
// (Recorder.Events), a wake-up when new ones come, what the terminal
// shows, and what it is doing.
type Watchable interface {
	Recorder
	// Changed returns a channel closed once the stream holds an event
	// after seq, or the session closed. A viewer waits on it and reads
	// the events itself: the output pump never waits for a viewer.
	Changed(seq uint64) <-chan struct{}
	// Ended reports that the session closed and no event after seq is
	// left.
	Ended(seq uint64) bool
	// Picture returns what the terminal shows now, with up to history
	// lines of its scrollback.
	Picture(history int) messages.Picture
	// Activity returns what the session is doing now (kernel facts).
	Activity() messages.Activity
	// Older returns events after seq that the window of recent events no
	// longer holds, from the session's record when one is written (a
	// batch at a time, in order, none past the window's start), and false
	// when they are gone (no record, or it was cut past seq).
	Older(seq uint64) ([]record.Event, bool)
}

// Recorder is a session that keeps the session's numbered event stream
// (record.Event): the backend numbers what crosses the terminal where the
// bytes arrive; the runtime adds what only it knows (a send's start and
// settle, marks, signals) with Note, which numbers the event after
// everything the stream already holds and returns its sequence.
type Recorder interface {
	Note(ev record.Event) uint64
	// Durable returns a wait that ends once the events noted so far are
	// in the session's record file (or the record failed, or ctx ended),
	// or nil when no record is written: a send's result waits for its
	// settle to be on record, and waits off its actor's mailbox.
	Durable() func(ctx context.Context) error
	// Events returns the kept events after seq, oldest first, and whether
	// some after seq are no longer kept.
	Events(seq uint64) ([]record.Event, bool)
}
