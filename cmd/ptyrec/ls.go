package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ptyactor/ptyactor/cmd/internal/terminals"
	"github.com/ptyactor/ptyactor/record"
)

// lsCmd lists the records of a folder, newest first: by default the
// folder ptymcp and ptyhost record into without -record-dir.
func lsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := keyFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "ptyrec ls: at most one DIR expected")
		fs.Usage()
		return exitUsage
	}
	dir := fs.Arg(0)
	if dir == "" {
		if dir = terminals.DefaultRecordDir(); dir == "off" {
			fmt.Fprintln(stderr, "ptyrec ls: no default records folder (neither XDG_STATE_HOME nor a home folder): give DIR")
			return exitUsage
		}
	}
	key, err := readKey(*keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "ptyrec ls: %v\n", err)
		return exitFail
	}
	ls, err := record.List(dir, key)
	if err != nil {
		if errors.Is(err, record.ErrNoFolder) {
			fmt.Fprintf(stderr, "ptyrec ls: %s: no such records folder (ptymcp and ptyhost create it when they first record; -record-dir names another)\n", dir)
		} else {
			fmt.Fprintf(stderr, "ptyrec ls: %v\n", err)
		}
		return exitFail
	}
	if len(ls) == 0 {
		fmt.Fprintf(stdout, "no records in %s\n", dir)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "START\tDURATION\tSIZE\tSTATE\tNAME\tOWNER\tFILE")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Start.Local().Format("2006-01-02 15:04:05"),
			duration(l.Duration), size(l.Bytes), state(l), orDash(l.Name), orDash(l.Owner), l.Path)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "ptyrec ls: %v\n", err)
		return exitFail
	}
	return exitOK
}

// state is a listing's state as a person reads it.
func state(l record.Listing) string {
	s := string(l.State)
	switch l.State {
	case record.StateKeyed:
		s = "keyed (-key to verify)"
	case record.StateCorrupt:
		var ce *record.CorruptError
		if errors.As(l.Err, &ce) {
			s = fmt.Sprintf("corrupt at %d", ce.Record)
		}
	}
	if l.Cut {
		s += ", cut"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// duration rounds d for a person: tenths under a minute, then seconds.
func duration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// size is n bytes in B, KiB, MiB or GiB.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
