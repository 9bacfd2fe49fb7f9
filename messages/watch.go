package messages

import "time"

// Badge is what a session is doing, as the kernel shows it: a console
// puts it next to each session, so a person sees which terminal waits
// for them.
type Badge string

// The badges.
const (
	// BadgeRunning: a program runs (or the platform cannot tell more).
	BadgeRunning Badge = "running"
	// BadgePrompt: the shell itself waits at its prompt, for a command
	// line; Activity.ExitCode is the last command's, from the prompt
	// marker.
	BadgePrompt Badge = "prompt"
	// BadgeWaiting: a program waits for a line of input
	// (Activity.Reader), its input consumed: it reads the terminal in
	// canonical mode (the kernel hands it whole lines), or it reads keys
	// on the main screen with no timeout of its own, as a REPL's line
	// editor does (python3's readline).
	BadgeWaiting Badge = "waiting"
	// BadgeInteractive: a full-screen program reads keys (the terminal in
	// non-canonical mode) while it draws: on the alternate screen, or in
	// a wait with its own timeout, after which it resumes by itself to
	// redraw (top). It waits for a person no more than an editor does;
	// Activity.LastOutput says whether it is drawing.
	BadgeInteractive Badge = "interactive"
	// BadgeSecret: it waits at a secret prompt (the terminal reads a line
	// with echo off: a password).
	BadgeSecret Badge = "secret"
	// BadgeExited: the shell exited (Activity.ExitCode).
	BadgeExited Badge = "exited"
	// BadgeLost: the session's host is unreachable.
	BadgeLost Badge = "lost"
)

// Reading is what one look at the terminal saw of a thread blocked
// reading it: the kernel's facts a badge is told from.
type Reading struct {
	// Shell: the reader is in the shell's own process group (the shell
	// at its prompt, or a builtin such as read).
	Shell bool
	// Canonical and Echo are the terminal's ICANON and ECHO: the kernel
	// hands the reader whole lines, and shows what is typed.
	Canonical, Echo bool
	// FullScreen: the terminal shows its alternate screen.
	FullScreen bool
	// Timed: the reader's wait call has its own timeout (poll, select,
	// epoll), after which the program resumes by itself.
	Timed bool
}

// Badge tells what a person should read of r: a line read with echo off
// is a secret prompt whoever reads it; any other line read waits for
// input; the shell reading keys is at its prompt (readline); a program
// reading keys waits for a line on the main screen with no timeout (a
// REPL's line editor), and is interactive on the alternate screen or in
// a timed wait (it redraws on its own).
func (r Reading) Badge() Badge {
	switch {
	case r.Canonical && !r.Echo:
		return BadgeSecret
	case r.Canonical:
		return BadgeWaiting
	case r.Shell:
		return BadgePrompt
	case r.FullScreen || r.Timed:
		return BadgeInteractive
	default:
		return BadgeWaiting
	}
}

// Activity is a session's state now, as a console shows it; Describe
// fills it (Snapshot.Activity) where the backend can tell.
type Activity struct {
	Badge Badge
	// Reader is the command reading the terminal (BadgePrompt,
	// BadgeWaiting, BadgeInteractive, BadgeSecret).
	Reader string
	// Program is the terminal's foreground program; Cwd its working
	// folder, where it can be read.
	Program string
	Cwd     string
	// ExitCode is, at BadgeExited, the shell's, once it exited with one;
	// at BadgePrompt, the last command's, when a prompt marker carried it.
	ExitCode *int
	// LastOutput is when the terminal last printed; zero if never.
	LastOutput time.Time
	// Rows and Cols are the terminal's size.
	Rows, Cols int
	// Seq is the number of the newest event of the session's stream.
	Seq uint64
}

// Picture is what a terminal shows, for a person who starts watching:
// Draw is the bytes that draw it on a fresh terminal of Rows x Cols
// (the newest lines of its scrollback first, then the screen in colour,
// its modes and cursor), and Seq the number of the newest event it shows;
// the events after Seq follow it.
type Picture struct {
	Draw       []byte
	Rows, Cols int
	Seq        uint64
}
