package messages

// SecretPrompt is one wait of a program at a secret prompt (the terminal
// reads a line with echo off: sudo, ssh, getpass, read -s), as a result
// saw it: the waiting thread, and the newest input before it, so the same
// wait is told from a later prompt (a retry, the next password: the
// program read input in between) by the kernel and the stream, not by
// the text on the screen.
type SecretPrompt struct {
	Session  SessionID
	Pgid     int    // the terminal's foreground group then
	TID      int    // the thread that waited reading the terminal
	InputSeq uint64 // the stream's newest input event then
	Reader   string // its command name
	// Line is the prompt's line on the screen ("[sudo] password for
	// ada: "), for the person who types the secret.
	Line string
}

// CodeSecretPromptGone: the secret prompt a person answers no longer
// waits (the program went on, or asks again: a new prompt).
const CodeSecretPromptGone Code = "SECRET_PROMPT_GONE"

// ErrSecretPromptGone matches every refusal of a secret for a prompt that
// no longer waits: nothing was written.
var ErrSecretPromptGone = &Error{CodeSecretPromptGone, "that secret prompt no longer waits"}
