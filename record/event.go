// Package record is a session's record: the numbered events of one
// terminal session (output as read, input with its source, resizes, each
// send's start and settle, signals, marks, the shell's exit), written as a
// hash chain that a verifier can check, and read back for export
// (asciicast) and replay.
package record

import "time"

// Kind names what an event records.
type Kind string

// The kinds of event. Output and input carry text; a secret input (typed
// while the terminal reads with echo off) carries only its length.
const (
	// KindStart opens a record: the session, the terminal's size and TERM.
	KindStart Kind = "start"
	// KindOutput is output as the session read it from the PTY, with the
	// prompt marker taken out (its nonce never enters a record).
	KindOutput Kind = "o"
	// KindInput is input written to the terminal, with its source.
	KindInput Kind = "i"
	// KindResize is a change of the terminal's size.
	KindResize Kind = "r"
	// KindPrompt is the shell's prompt marker, as a typed event: the exit
	// code it signed, never its nonce.
	KindPrompt Kind = "prompt"
	// KindSend is a send's start: its ticket and the lines it will type.
	KindSend Kind = "send"
	// KindSettle is a send's settlement.
	KindSettle Kind = "settle"
	// KindSignal is a signal sent to the terminal's foreground group.
	KindSignal Kind = "signal"
	// KindMark is a label a caller put in the record.
	KindMark Kind = "mark"
	// KindForeign is input found in the terminal before a send that its
	// caller did not write (another writer on the terminal).
	KindForeign Kind = "foreign"
	// KindControl is a change of who holds the session's input: a person
	// took it over, or it came back to the agent.
	KindControl Kind = "control"
	// KindExit is the shell's exit.
	KindExit Kind = "exit"
	// KindCheckpoint starts a segment after the oldest were cut: the hash
	// the chain had before it and the screen then.
	KindCheckpoint Kind = "checkpoint"
	// KindEnd closes the chain with the count of records before it.
	KindEnd Kind = "end"
)

// Sources of input.
const (
	SourceAgent    = "agent"
	SourceOperator = "operator"
	// SourceHuman prefixes a person's label: "human:<label>".
	SourceHuman = "human:"
)

// Event is one numbered event of a session. Seq is assigned where the
// session's bytes arrive, one sequence per session, gapless from 1. Mono
// is the time since the session started (monotonic); Wall the wall clock.
// Only the fields of its kind are set.
type Event struct {
	Seq  uint64        `json:"seq"`
	Mono time.Duration `json:"t"`
	Wall time.Time     `json:"wall"`
	Kind Kind          `json:"k"`

	// Data is output or input text (KindOutput, KindInput, KindForeign),
	// or a mark's label (KindMark).
	Data string `json:"d,omitempty"`
	// Raw holds Data in a record file when Data is not valid UTF-8 (a
	// read that split a character): JSON would replace the bytes with
	// U+FFFD, and the export needs them to join the character again. The
	// Writer moves Data here and the Reader moves it back, so a caller
	// never sees Raw set.
	Raw []byte `json:"raw,omitempty"`
	// Secret says the input was written while the terminal read with echo
	// off (a password prompt): Data is empty and Len is its length.
	Secret bool `json:"secret,omitempty"`
	Len    int  `json:"len,omitempty"`
	// Source is who wrote an input or sent a signal (SourceAgent, ...).
	Source string `json:"src,omitempty"`

	// Rows and Cols: the terminal's size (KindStart, KindResize).
	Rows int `json:"rows,omitempty"`
	Cols int `json:"cols,omitempty"`

	Start  *Start  `json:"start,omitempty"`
	Send   *Send   `json:"send,omitempty"`
	Settle *Settle `json:"settle,omitempty"`
	Signal *Signal `json:"signal,omitempty"`
	Exit   *Exit   `json:"exit,omitempty"`
	// Control is who holds the input from this event on (KindControl).
	Control *Control `json:"control,omitempty"`
	// ExitCode is the status a prompt marker signed (KindPrompt).
	ExitCode *int `json:"code,omitempty"`
	// Checkpoint (KindCheckpoint) and Count (KindEnd: the records of the
	// chain before it).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	Count      uint64      `json:"count,omitempty"`
}

// Start describes the session a record is of.
type Start struct {
	Session string `json:"session"`
	// Name is the session's display name and Owner its owner's label,
	// when the recorder knows them: what ptyrec ls shows a person.
	Name  string `json:"name,omitempty"`
	Owner string `json:"owner,omitempty"`
	Host  string `json:"host,omitempty"`
	Term  string `json:"term,omitempty"`
	Shell string `json:"shell,omitempty"`
	// Keyed says the chain is an HMAC-SHA-256 under a key, not a plain
	// SHA-256 chain.
	Keyed bool `json:"keyed,omitempty"`
}

// Send is a send's start.
type Send struct {
	Ticket uint64   `json:"ticket"`
	Lines  []string `json:"lines,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	// Wait says the send writes nothing: a wait.
	Wait bool `json:"wait,omitempty"`
}

// Settle is a send's settlement, with the exit code exactly as the prompt
// marker signed it.
type Settle struct {
	Ticket    uint64        `json:"ticket"`
	Reason    string        `json:"reason"`
	Cause     string        `json:"cause,omitempty"`
	ExitCode  *int          `json:"code,omitempty"`
	Reader    string        `json:"reader,omitempty"`
	Duration  time.Duration `json:"duration"`
	Unwritten []string      `json:"unwritten,omitempty"`
	// Cursor is the line cursor the send's output ended at.
	Cursor int64 `json:"cursor"`
}

// Control is a change of who holds a session's input.
type Control struct {
	// Holder is "agent" or the person's label; Person says which.
	Holder string `json:"holder"`
	Person bool   `json:"person,omitempty"`
	Epoch  uint64 `json:"epoch"`
	// Reason: "taken" (a person took it), "returned" or "idle" (it came
	// back to the agent).
	Reason string `json:"reason"`
	// Interrupt: the taker had the running command sent a SIGINT.
	Interrupt bool `json:"interrupt,omitempty"`
}

// Signal is a signal sent to a foreground group.
type Signal struct {
	Name   string `json:"name"`
	Target int    `json:"pgid"`
	Source string `json:"src,omitempty"`
}

// Hidden is the main screen behind the alternate one: its rows and the
// cursor that leaving the alternate screen brings back.
type Hidden struct {
	Rows   []string `json:"rows"`
	Cursor [2]int   `json:"cursorPos"`
}

// Exit is the shell's exit status.
type Exit struct {
	Code   *int   `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
}

// Checkpoint starts a segment: Prev is the chain's hash before the first
// record kept, and Screen the terminal's rows then.
type Checkpoint struct {
	Prev string `json:"prev"`
	// Record is the checkpoint's own number in the chain (its first
	// record is 1), so that a verifier reading from the cut numbers the
	// records as a verifier of the whole chain would.
	Record uint64 `json:"record"`
	// Keyed repeats Start.Keyed, which a cut removes.
	Keyed bool `json:"keyed,omitempty"`
	// Term repeats Start.Term (the event's Rows and Cols give the size
	// then), so that an export from the cut has its header.
	Term string `json:"term,omitempty"`
	// Session, Name, Owner and Began repeat the start's session, name,
	// owner and time, so that a listing of the cut record names it.
	Session string    `json:"session,omitempty"`
	Name    string    `json:"name,omitempty"`
	Owner   string    `json:"owner,omitempty"`
	Began   time.Time `json:"began,omitzero"`
	// Screen is the terminal's rows after the record before the
	// checkpoint (Options.Screens), the cursor's row and column, and
	// whether a program had the alternate screen; none when the segment
	// began without the caller's screen.
	Screen []string `json:"screen,omitempty"`
	Cursor [2]int   `json:"cursorPos"`
	Alt    bool     `json:"alt,omitempty"`
	// Hidden is the main screen behind a program's alternate screen,
	// which the shell shows again when the program ends.
	Hidden *Hidden `json:"hidden,omitempty"`
	// Margins is the scroll region (top and bottom rows, from 0) when a
	// program set one smaller than the screen.
	Margins *[2]int `json:"margins,omitempty"`
}
