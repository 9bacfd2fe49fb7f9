package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// playerParse is what test/player/parse.mjs prints.
type playerParse struct {
	PlayerVersion string `json:"playerVersion"`
	Version       int    `json:"version"`
	Error         *string
	Parser        struct {
		Cols, Rows    int
		Output, Input int
		Resizes       []string
		Markers       []playerMarker
		Exit          *string
		Text          string
	}
	Player struct {
		Cols, Rows int
		Duration   float64
		Markers    []playerMarker
		Resizes    []string
		Text       string
	}
}

type playerMarker struct {
	Time  float64
	Label string
}

// recordedSession runs a real shell with recording on: output with
// multibyte characters, sends that exit 0, 1 and 3, a resize, then the
// shell's own exit 5. It returns the record file and the send results'
// exit codes.
func recordedSession(t *testing.T) (path string, codes []int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "recordings")
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{
		local.New(local.Options{Record: local.Record{Dir: dir}}),
	}})
	o := testkit.Owner(t, svc, "player")
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// printf's octal escapes put "café ✓" in the output only, not in the
	// echo of the typed line.
	if res, err := sh.Send(ctx, messages.SendRequest{Text: `printf 'utf8: caf\303\251 \342\234\223\n'`, Submit: true}); err != nil || !strings.Contains(res.Viewport, "café ✓") {
		t.Fatalf("printf: %+v, %v", res, err)
	}
	for _, cmd := range []string{"true", "false", "(exit 3)"} {
		res, err := sh.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		if err != nil || res.ExitCode == nil {
			t.Fatalf("%s: %+v, %v", cmd, res, err)
		}
		codes = append(codes, *res.ExitCode)
	}
	if err := sh.Resize(ctx, 30, 100); err != nil {
		t.Fatal(err)
	}
	res, err := sh.Send(ctx, messages.SendRequest{Text: "exit 5", Submit: true})
	if err != nil || res.WaitReason != messages.WaitSessionExit || res.Status.ExitCode == nil || *res.Status.ExitCode != 5 {
		t.Fatalf("exit 5: %+v, %v", res, err)
	}
	report, err := sh.Close(ctx, "done")
	if err != nil || report.Recording == nil {
		t.Fatalf("close: %+v, %v", report, err)
	}
	return report.Recording.Path, codes
}

// recorded is what a record file holds that an export must carry.
type recorded struct {
	cols, rows int
	settles    map[uint64]int // ticket: exit code
	exit       *int
	resizes    []string
}

func readRecorded(t *testing.T, path string) recorded {
	t.Helper()
	r, err := record.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec := recorded{settles: map[uint64]int{}}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rec
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case record.KindStart:
			rec.cols, rec.rows = ev.Cols, ev.Rows
		case record.KindSettle:
			if ev.Settle.ExitCode != nil {
				rec.settles[ev.Settle.Ticket] = *ev.Settle.ExitCode
			}
		case record.KindResize:
			rec.resizes = append(rec.resizes, fmt.Sprintf("%dx%d", ev.Cols, ev.Rows))
		case record.KindExit:
			rec.exit = ev.Exit.Code
		}
	}
}

// TestAsciinemaPlayerParses reads ptyrec's v3 and v2 exports of a real
// recorded session with asciinema-player 3.x's own parser and player core
// (npm, pinned in test/player): both load without an error, with the
// header's size, every settle's exit code in its marker, the session's
// output (multibyte characters whole), the resize and, in v3, the exit
// status.
func TestAsciinemaPlayerParses(t *testing.T) {
	node, script := testkit.NodeScript(t, "player", "asciinema-player", "parse.mjs")
	path, codes := recordedSession(t)
	rec := readRecorded(t, path)
	var recCodes []int
	for _, c := range rec.settles {
		recCodes = append(recCodes, c)
	}
	slices.Sort(recCodes)
	if !slices.Equal(codes, []int{0, 1, 3}) {
		t.Fatalf("send results' exit codes %v, want 0, 1, 3", codes)
	}
	for _, c := range codes {
		if !slices.Contains(recCodes, c) {
			t.Fatalf("the record's settles %v lack the exit code %d a send returned", rec.settles, c)
		}
	}
	if rec.exit == nil || *rec.exit != 5 || !slices.Contains(rec.resizes, "100x30") {
		t.Fatalf("the record's exit %v and resizes %v; want exit 5 and 100x30", rec.exit, rec.resizes)
	}

	bin := build(t)
	dir := t.TempDir()
	for _, version := range []int{3, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			cast := filepath.Join(dir, fmt.Sprintf("s.v%d.cast", version))
			if r := runBin(t, bin, "export", "-format", fmt.Sprintf("asciicast-v%d", version), "-o", cast, path); r.code != 0 {
				t.Fatalf("export: %+v", r)
			}
			got := runPlayer(t, node, script, cast)
			if got.Version != version || !strings.HasPrefix(got.PlayerVersion, "3.") {
				t.Fatalf("asciinema-player %s read version %d, want 3.x reading %d", got.PlayerVersion, got.Version, version)
			}
			p, pl := got.Parser, got.Player
			if p.Cols != rec.cols || p.Rows != rec.rows || pl.Cols != rec.cols || pl.Rows != rec.rows {
				t.Errorf("size: parser %dx%d, player %dx%d; the record's %dx%d", p.Cols, p.Rows, pl.Cols, pl.Rows, rec.cols, rec.rows)
			}
			for ticket, code := range rec.settles {
				want := fmt.Sprintf("settled #%d: exit %d,", ticket, code)
				for name, ms := range map[string][]playerMarker{"parser": p.Markers, "player": pl.Markers} {
					if !slices.ContainsFunc(ms, func(m playerMarker) bool { return strings.HasPrefix(m.Label, want) }) {
						t.Errorf("%s: no marker %q in %+v", name, want, ms)
					}
				}
			}
			if len(pl.Markers) != len(p.Markers) {
				t.Errorf("player markers %+v, parser markers %+v", pl.Markers, p.Markers)
			}
			for name, text := range map[string]string{"parser": p.Text, "player": pl.Text} {
				if !strings.Contains(text, "utf8: café ✓\r\n") {
					t.Errorf("%s: the output lacks the printf line: %q", name, text)
				}
			}
			if p.Output == 0 || p.Input == 0 {
				t.Errorf("parser: %d output and %d input events", p.Output, p.Input)
			}
			for name, rs := range map[string][]string{"parser": p.Resizes, "player": pl.Resizes} {
				if !slices.Equal(rs, rec.resizes) {
					t.Errorf("%s: resizes %q, the record's %q", name, rs, rec.resizes)
				}
			}
			exit := strconv.Itoa(*rec.exit)
			if version == 3 {
				if p.Exit == nil || *p.Exit != exit {
					t.Errorf("v3 exit status %v, want %s", p.Exit, exit)
				}
			} else if p.Exit != nil || !slices.ContainsFunc(p.Markers, func(m playerMarker) bool { return m.Label == "exit "+exit }) {
				t.Errorf("v2: exit event %v, markers %+v; want no x event and a marker %q", p.Exit, p.Markers, "exit "+exit)
			}
			if pl.Duration <= 0 {
				t.Errorf("player duration %v", pl.Duration)
			}
		})
	}
}

// TestAsciinemaPlayerLoadsEmpty: the export of a record with nothing to
// show (a start alone) loads in asciinema-player too, which refuses a file
// without events.
func TestAsciinemaPlayerLoadsEmpty(t *testing.T) {
	node, script := testkit.NodeScript(t, "player", "asciinema-player", "parse.mjs")
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.rec")
	w, err := record.NewWriter(path, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(record.Event{Seq: 1, Wall: time.Now(), Kind: record.KindStart, Rows: 24, Cols: 80, Start: &record.Start{Session: "empty"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	bin := build(t)
	for _, format := range []string{"asciicast-v3", "asciicast-v2"} {
		cast := filepath.Join(dir, format+".cast")
		if r := runBin(t, bin, "export", "-format", format, "-o", cast, path); r.code != 0 {
			t.Fatalf("export: %+v", r)
		}
		if got := runPlayer(t, node, script, cast); got.Player.Cols != 80 || got.Player.Rows != 24 || got.Player.Text != "" {
			t.Fatalf("%s: %+v", format, got)
		}
	}
}

// runPlayer runs parse.mjs on cast and decodes what it printed.
func runPlayer(t *testing.T, node, script, cast string) playerParse {
	t.Helper()
	ctx, cancel := context.WithTimeout(testkit.Ctx(t), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, cast)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var got playerParse
	if jerr := json.Unmarshal(stdout.Bytes(), &got); jerr != nil || err != nil || got.Error != nil {
		cast, _ := os.ReadFile(cast)
		t.Fatalf("node parse.mjs: %v (json: %v)\nstdout %s\nstderr %s\nthe file:\n%s", err, jerr, stdout.Bytes(), stderr.Bytes(), cast)
	}
	return got
}
