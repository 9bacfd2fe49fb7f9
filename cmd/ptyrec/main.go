// Command ptyrec reads a session's record (package record): it lists a
// folder's records, plays one in the terminal, verifies its hash chain,
// exports it for asciinema, and prints its transcript.
//
//	ptyrec ls [-key FILE] [DIR]
//	ptyrec play [-speed N] [-idle-time-limit D] [-key FILE] FILE
//	ptyrec verify [-key FILE] [-expect HASH] FILE
//	ptyrec export [-format asciicast-v2|asciicast-v3] [-key FILE] [-o OUT] FILE
//	ptyrec cat [-key FILE] FILE
//	ptyrec screen [-at SEQ] [-json] [-key FILE] FILE
//
// verify exits 0 only for an intact chain closed by its end record (and,
// with -expect, ending at HASH, the hash terminal_close returned, which
// anchors the chain outside the file); otherwise it exits 1 with one line
// saying what is wrong: corrupt at a record, incomplete after one (a log
// cut by a crash: everything before verifies), or a key needed. A record
// whose oldest segments were cut verifies from its checkpoint, and says
// so. export and cat read only what verifies: they stop at a corrupt
// record (exit 1), and for an incomplete one write what verified, warn
// and exit 0. A keyed record needs its key file (-key), mode 0600.
//
// ls lists the records in DIR (by default the folder ptymcp and ptyhost
// record into, terminals.DefaultRecordDir), newest first: start, duration,
// size, state (verified, incomplete, corrupt, keyed), the session's name
// and owner, and the FILE to give the other commands.
//
// play writes the record's output to the terminal with its timing:
// -speed divides every pause, -idle-time-limit cuts a longer one first.
// With stdin a terminal, space pauses and resumes, "." plays the next
// output while paused, and q or Ctrl-C quits.
//
// export writes asciicast v2 by default, which asciinema 2.x and 3.x
// and asciinema-player play; -format asciicast-v3 writes v3 (asciinema
// 3.x), which ends with the exit event.
//
// screen replays the record's output through the terminal emulator the
// live session used (package replay) and prints the screen after event
// SEQ, with its hash: the hash terminal_screen gave when its seq was SEQ.
//
// FILE is the record's first segment's name; its later segments
// (FILE.1, FILE.2, ...) are read after it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ptyactor/ptyactor/cmd/internal/cli"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type command struct {
	name, args, help string
	run              func(args []string, stdout, stderr io.Writer) int
}

// commands is the table run dispatches from.
func commands() []command {
	return []command{
		{"ls", "[-key FILE] [DIR]", "list the records in DIR (default: the folder ptymcp records into), newest first", lsCmd},
		{"play", "[-speed N] [-idle-time-limit D] [-key FILE] FILE", "play the record in this terminal, timed (space pauses, Ctrl-C quits)", playCmd},
		{"verify", "[-key FILE] [-expect HASH] FILE", "check the record's hash chain", verifyCmd},
		{"export", "[-format asciicast-v2|asciicast-v3] [-key FILE] [-o OUT] FILE", "write the record as an asciicast (v2, which asciinema 2.x and 3.x play; -format asciicast-v3 for v3)", exportCmd},
		{"cat", "[-key FILE] FILE", "print the transcript, escape sequences removed", catCmd},
		{"screen", "[-at SEQ] [-json] [-key FILE] FILE", "print the screen after an event (default: the last), replayed", screenCmd},
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-version" || args[0] == "--version") {
		fmt.Fprintln(stdout, cli.Version("ptyrec"))
		return exitOK
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ptyrec: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	cli.WriteHeader(w, "ptyrec COMMAND [flags] FILE",
		`ptyrec reads the record of a ptyactor session (ptymcp and ptyhost record
every session under ~/.local/state/ptyactor/recordings by default): it
lists them, plays one in the terminal, checks a record's hash chain,
exports it for asciinema, prints its transcript or the screen after an
event. ptyrec -version prints the version.`,
		`ptyrec ls                          # the records, newest first`,
		`ptyrec play -idle-time-limit 1s FILE`,
		`ptyrec export -o out.cast FILE && asciinema play out.cast`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  ptyrec %s %s\n    \t%s\n", c.name, c.args, c.help)
	}
	fmt.Fprintln(w, "ptyrec COMMAND -h lists a command's flags.")
}

// parse parses a command's flags and its one FILE argument; code is
// non-negative when the command should exit with it.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) (file string, code int) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", exitOK
		}
		return "", exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "ptyrec %s: one FILE expected\n", fs.Name())
		fs.Usage()
		return "", exitUsage
	}
	return fs.Arg(0), -1
}
