package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/record/replay"
)

func keyFlag(fs *flag.FlagSet) *string {
	return fs.String("key", "", "the chain's key `FILE` (mode 0600), for a keyed record")
}

// readKey reads the -key file, if one was given.
func readKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	return record.ReadKeyFile(path)
}

// reason is the one line that says why a record failed.
func reason(file string, err error) string {
	switch {
	case errors.Is(err, record.ErrKeyRequired):
		return fmt.Sprintf("%s: the record is keyed: give its key with -key FILE", file)
	default:
		return fmt.Sprintf("%s: %v", file, err)
	}
}

func verifyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	keyFile := keyFlag(fs)
	expect := fs.String("expect", "", "the final chain `HASH` (hex) the record must end at")
	file, code := parse(fs, args, stderr)
	if code >= 0 {
		return code
	}
	key, err := readKey(*keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "ptyrec verify: %v\n", err)
		return exitFail
	}
	rep, err := record.VerifyFile(file, key)
	if err != nil {
		fmt.Fprintf(stderr, "ptyrec verify: %s\n", reason(file, err))
		return exitFail
	}
	if *expect != "" && !strings.EqualFold(*expect, rep.Last) {
		fmt.Fprintf(stderr, "ptyrec verify: %s: the chain ends at %s, not at the expected %s\n", file, rep.Last, *expect)
		return exitFail
	}
	from := ""
	if rep.FromCheckpoint {
		from = fmt.Sprintf(", verified from record %d (checkpoint: the records before it were cut)", rep.First)
	}
	keyed := ""
	if rep.Keyed {
		keyed = " keyed"
	}
	fmt.Fprintf(stdout, "ok: %d records, closed%s, sha256 %s%s\n", rep.Records, keyed, rep.Last, from)
	return exitOK
}

func exportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	keyFile := keyFlag(fs)
	// v2 by default: every asciinema plays it (Debian's asciinema 2.2
	// refuses v3: "only asciicast v1 and v2"), and so does
	// asciinema-player 3.x.
	format := fs.String("format", "asciicast-v2", "`FORMAT`: asciicast-v2 (asciinema 2.x and 3.x) or asciicast-v3 (asciinema 3.x, with the exit event)")
	out := fs.String("o", "", "write to `FILE` (mode 0600) instead of stdout")
	file, code := parse(fs, args, stderr)
	if code >= 0 {
		return code
	}
	export := record.ExportV2
	switch *format {
	case "asciicast-v2":
	case "asciicast-v3":
		export = record.ExportV3
	default:
		fmt.Fprintf(stderr, "ptyrec export: unknown -format %q (asciicast-v2 or asciicast-v3)\n", *format)
		return exitUsage
	}
	return read("export", file, *keyFile, *out, stdout, stderr, export)
}

func catCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cat", flag.ContinueOnError)
	keyFile := keyFlag(fs)
	file, code := parse(fs, args, stderr)
	if code >= 0 {
		return code
	}
	return read("cat", file, *keyFile, "", stdout, stderr, replay.Transcript)
}

// read runs an export or the transcript of file into out (stdout when
// empty). An incomplete record is written as far as it verifies, with a
// warning; a corrupt one fails, and its partial output file is removed.
func read(cmd, file, keyFile, out string, stdout, stderr io.Writer, f func(io.Writer, *record.Reader) error) int {
	key, err := readKey(keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "ptyrec %s: %v\n", cmd, err)
		return exitFail
	}
	r, err := record.Open(file, key)
	if err != nil {
		fmt.Fprintf(stderr, "ptyrec %s: %v\n", cmd, err)
		return exitFail
	}
	defer r.Close()
	w := stdout
	var of *os.File
	if out != "" {
		of, err = os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "ptyrec %s: %v\n", cmd, err)
			return exitFail
		}
		w = of
	}
	err = f(w, r)
	if of != nil {
		if cerr := of.Close(); err == nil {
			err = cerr
		}
	}
	var ie *record.IncompleteError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "ptyrec %s: warning: %s\n", cmd, reason(file, err))
		return exitOK
	default:
		if of != nil {
			os.Remove(out)
		}
		fmt.Fprintf(stderr, "ptyrec %s: %s\n", cmd, reason(file, err))
		return exitFail
	}
}

func screenCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("screen", flag.ContinueOnError)
	keyFile := keyFlag(fs)
	at := fs.Uint64("at", 0, "the event `SEQ` after which to show the screen (0: the last)")
	asJSON := fs.Bool("json", false, "print the screen as JSON: seq, rows, cols, cursor, alt, hash, lines")
	file, code := parse(fs, args, stderr)
	if code >= 0 {
		return code
	}
	return read("screen", file, *keyFile, "", stdout, stderr, func(w io.Writer, r *record.Reader) error {
		sc, seq, err := replay.Screen(r, *at)
		var ie *record.IncompleteError
		if err != nil && !errors.As(err, &ie) {
			return err
		}
		if *asJSON {
			type screen struct {
				Seq       uint64   `json:"seq"`
				Rows      int      `json:"rows"`
				Cols      int      `json:"cols"`
				CursorRow int      `json:"cursorRow"`
				CursorCol int      `json:"cursorCol"`
				Alt       bool     `json:"altScreen"`
				Hash      string   `json:"hash"`
				Lines     []string `json:"lines"`
			}
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			if jerr := enc.Encode(screen{seq, sc.Size.Rows, sc.Size.Cols, sc.CursorRow, sc.CursorCol, sc.AltScreen, sc.Hash, sc.Rows}); jerr != nil {
				return jerr
			}
			return err
		}
		for _, row := range sc.Rows {
			fmt.Fprintln(w, row)
		}
		fmt.Fprintf(w, "[screen after event %d: %dx%d, cursor %d,%d, hash %s]\n", seq, sc.Size.Cols, sc.Size.Rows, sc.CursorRow, sc.CursorCol, sc.Hash)
		return err
	})
}
