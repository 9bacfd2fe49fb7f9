package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/rs/zerolog"
)

// The version line names the module's version and path, the revision
// with its time and whether the tree was modified, and the toolchain.
func TestVersionLine(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/ptyactor/ptyactor", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "632899a7e0a1"},
			{Key: "vcs.time", Value: "2026-12-07T06:14:25Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	want := "ptymcp v0.3.0 (github.com/ptyactor/ptyactor, revision 632899a7e0a1 2026-12-07T06:14:25Z modified) go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH
	if got := versionLine("ptymcp", info, true); got != want {
		t.Errorf("version:\n got %s\nwant %s", got, want)
	}
	info.Main.Version, info.Settings = "", nil
	if got := versionLine("ptyhost", info, true); !strings.HasPrefix(got, "ptyhost (devel) (github.com/ptyactor/ptyactor, revision unknown) go1.26.8") {
		t.Errorf("without VCS stamps: %s", got)
	}
	if got := versionLine("ptyrec", nil, false); !strings.HasPrefix(got, "ptyrec (no build info) go") {
		t.Errorf("without build info: %s", got)
	}
	// A test binary has build info: its module at least.
	if got := Version("x"); !strings.Contains(got, "github.com/ptyactor/ptyactor") {
		t.Errorf("Version of the test binary: %s", got)
	}
}

// -help opens with the summary and the examples, then the flags; no
// example line looks like a flag to a parser of the flag list.
func TestUsage(t *testing.T) {
	fs := flag.NewFlagSet("ptyx", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	VersionFlag(fs)
	fs.String("workspace", "", "the workspace")
	Usage(fs, "ptyx [flags]", "ptyx does one job.", "ptyx -workspace ~/p  # here", "ptyx -version")
	if err := fs.Parse([]string{"-h"}); err != flag.ErrHelp {
		t.Fatalf("-h: %v", err)
	}
	text := out.String()
	if !strings.HasPrefix(text, "ptyx does one job.\n\nExamples:\n  ptyx -workspace ~/p  # here\n  ptyx -version\n\nUsage: ptyx [flags]\nFlags:\n") {
		t.Fatalf("usage:\n%s", text)
	}
	var flags []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "  -") {
			flags = append(flags, strings.Fields(l)[0])
		}
	}
	if strings.Join(flags, " ") != "-version -workspace" {
		t.Errorf("the lines a flag table parser reads as flags: %q", flags)
	}
}

func TestCheckLogFormat(t *testing.T) {
	for _, f := range []string{"", "json", "text"} {
		if err := CheckLogFormat(f); err != nil {
			t.Errorf("%q: %v", f, err)
		}
	}
	if err := CheckLogFormat("yaml"); err == nil || !strings.Contains(err.Error(), "-log-format") {
		t.Errorf("yaml: %v, want an error naming the flag", err)
	}
}

// JSON by default where a machine reads (a pipe, a buffer); the console
// writer's text on a terminal, or when asked for.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log := Logger(&buf, "", zerolog.InfoLevel, "ptyx")
	log.Info().Str("k", "v").Msg("hello")
	log.Debug().Msg("below the level")
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m["message"] != "hello" || m["component"] != "ptyx" || m["k"] != "v" {
		t.Fatalf("default to a buffer: %q (%v), want one JSON line", buf.String(), err)
	}
	buf.Reset()
	log = Logger(&buf, LogText, zerolog.InfoLevel, "ptyx")
	log.Info().Str("k", "v").Msg("hello")
	if s := buf.String(); !strings.Contains(s, "INF hello") || !strings.Contains(s, "k=v") || strings.HasPrefix(s, "{") || strings.Contains(s, "\x1b[") {
		t.Fatalf("text to a buffer: %q, want the console writer's line without colour", s)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	log = Logger(tty, "", zerolog.InfoLevel, "ptyx")
	log.Info().Msg("to a person")
	_ = ptmx.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(ptmx).ReadString('\n')
	if err != nil || !strings.Contains(line, "to a person") || strings.HasPrefix(line, "{") {
		t.Fatalf("default to a terminal: %q, %v; want the console writer's text", line, err)
	}
}
