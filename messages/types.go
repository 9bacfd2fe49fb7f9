package messages

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// SessionID names a session. The service mints it (random, prefixed); callers
// never choose it.
type SessionID string

// ownerKey exists only so that Owner compares by identity.
type ownerKey struct{ label string }

// Owner is the identity that owns sessions: an agent, an MCP connection. It is
// an opaque token compared by identity: two owners minted with the same label
// are different owners. The zero Owner is not live anywhere.
type Owner struct{ k *ownerKey }

// NewOwner mints a fresh owner identity. The label is for logs only.
func NewOwner(label string) Owner { return Owner{k: &ownerKey{label: label}} }

// IsZero reports whether o is the zero Owner.
func (o Owner) IsZero() bool { return o.k == nil }

// Label returns the display label given at minting.
func (o Owner) Label() string {
	if o.k == nil {
		return ""
	}
	return o.k.label
}

func (o Owner) String() string { return fmt.Sprintf("owner(%s@%p)", o.Label(), o.k) }

// WaitReason says why a send returned.
type WaitReason string

const (
	// WaitStdinRead: the foreground program is proven to wait on the terminal,
	// or the shell's verified prompt marker appeared.
	WaitStdinRead WaitReason = "stdin_read"
	// WaitInferredIdle: output silence; the program may still be running.
	WaitInferredIdle WaitReason = "inferred_idle"
	// WaitTimeout: the absolute deadline passed; it never implies exit.
	WaitTimeout WaitReason = "timeout"
	// WaitSessionExit: the top-level shell exited.
	WaitSessionExit WaitReason = "session_exit"
)

// Cause says which condition ended a send. The wait reason keeps the four
// reasons of the design; the cause tells them apart further, so a result
// that is not a plain return to the prompt says why.
type Cause string

const (
	// CausePrompt: the shell's prompt returned (ExitCode is set).
	CausePrompt Cause = "prompt"
	// CausePattern: new output matched the wait's pattern (wait reason
	// inferred_idle: the program may still be running).
	CausePattern Cause = "pattern"
	// CauseInput: the program reading the terminal (or the shell, without
	// a prompt) waits for input.
	CauseInput Cause = "input"
	// CauseSilence: no output for the silence threshold; the program may
	// still be running.
	CauseSilence Cause = "silence"
	// CauseDeadline: the send's deadline passed; the program may still be
	// running.
	CauseDeadline Cause = "deadline"
	// CauseCancelled: the caller cancelled: the input was never written,
	// or the program was interrupted with SIGINT.
	CauseCancelled Cause = "cancelled"
	// CauseClosed: the session was closed (a kill, the owner's disposal)
	// while the send waited.
	CauseClosed Cause = "closed"
	// CauseExit: the shell exited (Status has its code or signal).
	CauseExit Cause = "exit"
	// CauseFailed: the backend failed to write or signal; the error says
	// how.
	CauseFailed Cause = "failed"
	// CauseTakenOver: a person took the session's input over while the
	// send ran; the wait reason is what was true then (stdin_read only
	// when the kernel proved a wait for input).
	CauseTakenOver Cause = "taken_over"
)

// SessionStatus is running, or exited with an exit code and/or a signal.
type SessionStatus struct {
	Exited   bool
	ExitCode *int   // set when the shell exited normally
	Signal   string // set when the shell was killed by a signal, e.g. "SIGKILL"
	// Cause is set when the shell's own end is unknown: CauseHostLost.
	Cause string
}

// CauseHostLost: the session's remote host was lost; what became of its
// shell is unknown here.
const CauseHostLost = "host_lost"

// Running is the status of a live session.
var Running = SessionStatus{}

// ExitedWith returns an exited status with an exit code.
func ExitedWith(code int) SessionStatus { return SessionStatus{Exited: true, ExitCode: &code} }

// ExitedBySignal returns an exited status with a signal name.
func ExitedBySignal(sig string) SessionStatus { return SessionStatus{Exited: true, Signal: sig} }

// String renders the status as the tools show it:
// "running" or "exited code=<n|null> signal=<S|null>".
func (s SessionStatus) String() string {
	if !s.Exited {
		return "running"
	}
	code, sig := "null", "null"
	if s.ExitCode != nil {
		code = strconv.Itoa(*s.ExitCode)
	}
	if s.Signal != "" {
		sig = s.Signal
	}
	if s.Cause != "" {
		return "exited code=" + code + " signal=" + sig + " cause=" + s.Cause
	}
	return "exited code=" + code + " signal=" + sig
}

// Signal is one of the closed set a caller may send to a foreground group.
type Signal string

const (
	SIGINT  Signal = "SIGINT"
	SIGTERM Signal = "SIGTERM"
	SIGKILL Signal = "SIGKILL"
	SIGTSTP Signal = "SIGTSTP"
	SIGHUP  Signal = "SIGHUP"
)

// Signals lists the closed set in a stable order.
var Signals = []Signal{SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP}

// Valid reports whether s is in the closed set.
func (s Signal) Valid() bool { return slices.Contains(Signals, s) }

// ParseSignal returns the signal named name, or an error wrapping
// ErrInvalidArgument that lists the closed set. It is the one check of a
// signal's validity: the runtime applies it to every signal request, so a
// layer above (a tool, a transport) passes names through unchecked.
func ParseSignal(name string) (Signal, error) {
	if s := Signal(name); s.Valid() {
		return s, nil
	}
	// %.40q: at most 40 runes of a caller's (or a model's) string.
	return "", InvalidArgument("signal must be one of %v, got %.40q", Signals, name)
}

// SpawnRequest asks for a new session.
type SpawnRequest struct {
	Type string // backend type; empty means "the only registered backend"
	Name string // optional display name, unique per owner; when given, a label (CheckLabel)
	Cwd  string // optional working directory
	// Host places the session on a registered remote host (see
	// remote.Client.RegisterHost in actors/remote): its name, or AnyHost for the live host
	// with the fewest sessions. Empty means this process.
	Host string
	// RecordAs is the id the session's record names it by, when its caller
	// knows it by another than the one this runtime mints: a host's
	// gateway sets the client's id. Empty means the session's own id.
	RecordAs SessionID
}

// AnyHost in SpawnRequest.Host lets the runtime choose among the registered
// hosts: the live one with the fewest sessions.
const AnyHost = "*"

// SpawnSpec is what a backend receives: the request plus the minted identity.
type SpawnSpec struct {
	SpawnRequest
	SessionID SessionID
	Owner     Owner
}

// SendRequest is input for the foreground program. Text is typed the way a
// person types it: line by line (split at \n, \r\n counting as one), each
// line with the terminal's Enter, each written once the program reading
// the terminal has consumed the previous one and waits again, so each line
// reaches whichever program reads next. With Submit the last line gets an
// Enter too. Raw writes Text (and the Enter) as given, all at once.
type SendRequest struct {
	Text   string
	Submit bool
	Raw    bool
	// Keys are named keys pressed after the text (see backend.EncodeKey:
	// Enter, Tab, Escape, arrows, F1-F12, Ctrl-<letter>, Alt-<key>, ...).
	Keys []string
	// Paste sends Text at once between bracketed-paste markers, when the
	// program turned bracketed paste on (as a terminal pastes); otherwise
	// Text is typed.
	Paste bool
	// Screen asks for the terminal's screen in the result even when no
	// full-screen program is on the alternate screen (top draws on the
	// main one).
	Screen bool
	// Wait bounds this send within the runtime's configuration. A send
	// with no Text and no Submit writes nothing: it is a wait, which
	// keeps the evidence since the previous send settled (a prompt that
	// returned meanwhile settles it at once, with its exit code).
	Wait WaitPolicy
}

// WaitPolicy is a caller's choice of when a send or wait returns. Zero
// fields take the configuration's values.
type WaitPolicy struct {
	// Timeout is the deadline (default Config.TimeoutMs).
	Timeout time.Duration
	// Silence is the output silence that settles as inferred_idle
	// (default Config.IdleSilenceMs).
	Silence time.Duration
	// NoSilence: silence never settles; only a prompt, a reader's wait,
	// the shell's exit, the pattern or the deadline do.
	NoSilence bool
	// Pattern, a Go regular expression (RE2 syntax), settles the send as
	// soon as new output matches it (cause pattern).
	Pattern string
	// Since, for a wait (a send that writes nothing), is the caller's
	// output cursor: the result shows the output from there on, so what
	// was printed between the previous result and the wait is not lost.
	// Nil means from where the session's previous result ended: the
	// output printed since, not what that result showed again.
	Since *uint64
}

// SendRead is output produced since the previous ReadOutput call of a send.
type SendRead struct {
	Delta     string
	Truncated bool // output was dropped from this send's buffer
	// Cursor is the count of final lines printed when the read was taken
	// (see ReadResult.Cursor); set by EndSend.
	Cursor uint64
	// OmittedFrom, OmittedTo: final lines of the send's output that a
	// truncated Delta does not show; read them from scrollback with a
	// cursor read from OmittedFrom while they are retained.
	OmittedFrom, OmittedTo uint64
}

// SendResult is how a send settled.
type SendResult struct {
	Viewport   string        // bounded rendered delta since the write, not yet read
	WaitReason WaitReason    // why the send returned
	Cause      Cause         // which condition ended it
	Status     SessionStatus // the session's status when it settled
	Truncated  bool          // this send lost output (its buffer overflowed)
	ExitCode   *int          // the last command's exit status, when a prompt marker settled the send
	Reader     string        // command name of the process proven to wait on the terminal, when known
	Elapsed    time.Duration // from reservation to settlement
	// Unwritten counts the lines of a line-by-line send that were never
	// written: the send settled (deadline, cancel, exit) before their turn.
	// They will never be written. FirstUnwritten is the first of them.
	Unwritten      int
	FirstUnwritten string
	// Cursor is the count of final transcript lines when the send settled:
	// the viewport shows the lines after the send began up to it, then the
	// unfinished line (re-sent by the next read). A truncated viewport
	// leaves out the final lines [OmittedFrom, OmittedTo).
	Cursor                 uint64
	OmittedFrom, OmittedTo uint64
	// Screen is the terminal's screen when the send settled while a
	// full-screen program (the alternate screen) was showing; nil
	// otherwise.
	Screen *Screen
	// Running lists, when the shell's prompt settled the send, the
	// processes its commands left running (background jobs, nohup and
	// disowned children): `npm run dev &` is still serving.
	Running []Process
	// Secret: the program waits for a secret (a password prompt: the
	// terminal reads a line with echo off). Ask the person; never type a
	// credential on their behalf.
	Secret bool
	// ForeignInput is input nobody sent that waited for the shell at its
	// prompt when this send was written (a terminal's answers to queries
	// in a file that was cat'ed, bytes a program pushed with TIOCSTI):
	// discarded, so the send's line ran as written, and shown here
	// quoted (control bytes escaped, at most 256 bytes). Linux only.
	ForeignInput string
	// Seq is the number of the send's settle event in the session's event
	// stream (zero where the backend keeps none): everything the result
	// reflects came before it.
	Seq uint64
	// Handback, on the agent's first result after people held the
	// session's input, is what they did.
	Handback *Handback
	// SecretPrompt, with Secret, is the prompt's wait: a person answers
	// it (Session.EnterSecret), never the model.
	SecretPrompt *SecretPrompt
	// SecretEntered: a person typed a secret at a prompt since the
	// agent's previous result (the secret itself is in no result).
	SecretEntered bool
}

// ReadRequest pages retained scrollback, counted back from the newest line.
// Nil fields take their defaults (offset 0, count 500).
type ReadRequest struct {
	Offset *int
	Count  *int
	// Cursor, when set, reads forward instead: every final line after the
	// cursor still retained (none twice across reads that pass on the
	// returned cursor), then the unfinished line. Offset and Count are
	// then ignored.
	Cursor *uint64
}

// DefaultReadCount is the page size when ReadRequest.Count is nil.
const DefaultReadCount = 500

// Resolve applies the defaults (offset 0, count DefaultReadCount) and
// checks the range: offset at least 0, count at least 1. Its errors wrap
// ErrInvalidArgument. It is the one check of a page request: the runtime
// resolves every Read before the backend sees it, so a layer above checks
// only its own encoding (a tool, that a JSON number is an integer) and a
// backend receives both fields set and in range.
func (r ReadRequest) Resolve() (offset, count int, err error) {
	offset, count = 0, DefaultReadCount
	if r.Offset != nil {
		offset = *r.Offset
	}
	if r.Count != nil {
		count = *r.Count
	}
	if offset < 0 {
		return 0, 0, InvalidArgument("offset must be an integer >= 0, got %d", offset)
	}
	if count < 1 {
		return 0, 0, InvalidArgument("count must be an integer >= 1, got %d", count)
	}
	return offset, count, nil
}

// ReadResult is one page of scrollback.
type ReadResult struct {
	Text       string
	TotalLines int
	LineBegin  int
	LineEnd    int
	Truncated  bool // the page was cut to maxReadBytes, or older output was dropped from scrollback
	// Cursor counts the final lines (those ended by a newline) the session
	// ever printed; after a cursor read, the lines before it were shown
	// (or are in the omitted range). Pass it to read on.
	Cursor uint64
	// OmittedFrom, OmittedTo: final lines [from, to) after the requested
	// cursor that scrollback no longer holds; they can never be shown.
	OmittedFrom, OmittedTo uint64
	// More: a cursor read filled its page before the newest line; read
	// again from Cursor for the rest.
	More bool
	// Handback, on the agent's first result after people held the
	// session's input, is what they did (see SendResult.Handback).
	Handback *Handback
}

// SignalResult reports a signal sent to the terminal's foreground group
// TargetPgid. Delivered is false when the signal was sent and the kernel
// dropped it for a member of the group: a process that is pid 1 of its pid
// namespace (the sandbox's, once the shell exec'd a program) and has no
// handler for it is shielded from every signal but SIGKILL. Reason then
// says which process and why, and what ends it instead; it is empty when
// Delivered.
type SignalResult struct {
	Delivered  bool
	TargetPgid int
	Reason     string
}

// Screen is what the terminal shows now, as a person sees it: the rows as
// text (attributes dropped, trailing blanks trimmed), the cursor, the size,
// whether a full-screen program switched to the alternate screen, and a
// hash that changes exactly when the rows or the cursor do.
type Screen struct {
	Rows                 []string
	CursorRow, CursorCol int
	Height, Width        int
	AltScreen            bool
	Hash                 string
	// Seq is the newest output event in the session's stream that the
	// screen shows (zero where the backend keeps no stream).
	Seq uint64
}

// Process is a process a command left running in its session.
type Process struct {
	PID     int
	Command string // the command name (comm)
	// Detached: it will outlive the shell's hangup: it left the shell's
	// session (setsid) or ignores SIGHUP (nohup).
	Detached bool
}

// Snapshot describes a published session.
type Snapshot struct {
	SessionID SessionID
	Name      string
	Type      string
	PID       int
	Status    SessionStatus
	// SecretPrompt: the newest send settled at a secret prompt (see
	// SendResult.Secret) and no send has started since.
	SecretPrompt bool
	// Control is who holds the session's input.
	Control Control
	// Activity is the session's state now, from the kernel: set by
	// Describe where the backend can tell, nil elsewhere.
	Activity *Activity
}

// SpawnResult is a snapshot plus the startup output.
type SpawnResult struct {
	Snapshot
	Motd string
}

// CloseReport is the leak report of a finished close.
type CloseReport struct {
	Killed    []int // pids the teardown signalled, children first, the shell last
	Survivors []int // pids still alive after teardown; empty on success
	Status    SessionStatus
	// Joined says the call joined a close another caller had started; the
	// report is that close's.
	Joined bool
	// Recording is the session's record, closed, where one was written.
	Recording *Recording
}

// Recording names a session's closed record and the end of its hash
// chain, which anchors it outside the file (ptyrec verify -expect).
type Recording struct {
	Path    string // the record's file on Host
	Host    string // the machine the file is on
	Records uint64 // the chain's records, its end included
	SHA256  string // the last record's chain hash, hex
}
