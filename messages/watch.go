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
	// BadgeWaiting: the foreground program is blocked reading the
	// terminal (Activity.Reader), its input consumed.
	BadgeWaiting Badge = "waiting"
	// BadgeSecret: it waits at a secret prompt (the terminal reads a line
	// with echo off: a password).
	BadgeSecret Badge = "secret"
	// BadgeExited: the shell exited (Activity.ExitCode).
	BadgeExited Badge = "exited"
	// BadgeLost: the session's host is unreachable.
	BadgeLost Badge = "lost"
)

// Activity is a session's state now, as a console shows it; Describe
// fills it (Snapshot.Activity) where the backend can tell.
type Activity struct {
	Badge Badge
	// Reader is the command waiting for input (BadgeWaiting, BadgeSecret).
	Reader string
	// Program is the terminal's foreground program; Cwd its working
	// folder, where it can be read.
	Program string
	Cwd     string
	// ExitCode is the shell's, once it exited with one.
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
