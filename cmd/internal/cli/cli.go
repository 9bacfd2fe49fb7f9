// Package cli is what the commands (ptymcp, ptyhost, ptyrec, the demo)
// share at their surface, so they explain themselves alike: -version (the
// module's version and VCS revision from the build info), a -help that
// opens with what the command is for and examples, and the stderr log's
// format (-log-format: JSON for a machine, zerolog's console writer for a
// person).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// ErrVersion is what a command's flag parsing returns after -version:
// the caller prints Version and exits 0, as after -help (flag.ErrHelp).
var ErrVersion = errors.New("version asked for")

// VersionFlag defines -version on fs.
func VersionFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("version", false, "print the version (module version and VCS revision) and exit")
}

// Version is the command's version line: the module's version, its path,
// the VCS revision it was built from (and whether the tree had changes),
// and the Go toolchain, from the binary's build info.
func Version(command string) string {
	info, ok := debug.ReadBuildInfo()
	return versionLine(command, info, ok)
}

func versionLine(command string, info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return command + " (no build info) " + runtime.Version()
	}
	version, path := info.Main.Version, info.Main.Path
	if version == "" {
		version = "(devel)"
	}
	if path == "" {
		path = "(unknown module)"
	}
	set := map[string]string{}
	for _, s := range info.Settings {
		set[s.Key] = s.Value
	}
	rev := "revision unknown"
	if r := set["vcs.revision"]; r != "" {
		rev = "revision " + r
		if t := set["vcs.time"]; t != "" {
			rev += " " + t
		}
		if set["vcs.modified"] == "true" {
			rev += " modified"
		}
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return fmt.Sprintf("%s %s (%s, %s) %s %s/%s", command, version, path, rev, goVersion, runtime.GOOS, runtime.GOARCH)
}

// Usage makes fs's usage (-help) open with what the command is for and a
// few examples, then its flags. synopsis is the command line's shape
// ("ptymcp [flags]"); each example is a command line, optionally followed
// by "  # why".
func Usage(fs *flag.FlagSet, synopsis, summary string, examples ...string) {
	fs.Usage = func() {
		w := fs.Output()
		WriteHeader(w, synopsis, summary, examples...)
		fmt.Fprintln(w, "Flags:")
		fs.PrintDefaults()
	}
}

// WriteHeader writes the head of a usage: the summary, the examples, the
// synopsis. Example lines are indented by two spaces and never start
// with "-", so a flag list parsed after it (docs.CheckFlags) sees only
// flags.
func WriteHeader(w io.Writer, synopsis, summary string, examples ...string) {
	fmt.Fprintln(w, strings.TrimSpace(summary))
	fmt.Fprintln(w)
	if len(examples) > 0 {
		fmt.Fprintln(w, "Examples:")
		for _, e := range examples {
			fmt.Fprintln(w, "  "+e)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Usage: "+synopsis)
}

// The log formats of -log-format.
const (
	LogJSON = "json" // one JSON object a line: for a machine (MCP clients keep stderr)
	LogText = "text" // zerolog's console writer: for a person reading a terminal
)

// LogFormatUsage is -log-format's usage line.
const LogFormatUsage = "stderr log format: json, or text (for a person; default when stderr is a terminal)"

// CheckLogFormat accepts "", json or text.
func CheckLogFormat(f string) error {
	switch f {
	case "", LogJSON, LogText:
		return nil
	}
	return fmt.Errorf("-log-format %q: want json or text", f)
}

// Logger is the command's stderr log: format json or text, or "" for
// text when w is a terminal and JSON otherwise (a client or a script
// reading it); at level, each line naming the component.
func Logger(w io.Writer, format string, level zerolog.Level, component string) zerolog.Logger {
	if format == "" {
		format = LogJSON
		if isTerminal(w) {
			format = LogText
		}
	}
	out := w
	if format == LogText {
		out = zerolog.ConsoleWriter{Out: w, NoColor: !isTerminal(w), TimeFormat: time.TimeOnly}
	}
	return zerolog.New(out).Level(level).With().Timestamp().Str("component", component).Logger()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
