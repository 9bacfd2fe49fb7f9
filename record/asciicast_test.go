package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// cast exports the session's record in a version and returns its header
// and events, each line parsed as JSON.
func cast(t *testing.T, version int) (map[string]any, [][3]any) {
	t.Helper()
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	if version == 2 {
		err = ExportV2(&b, r)
	} else {
		err = ExportV3(&b, r)
	}
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var h map[string]any
	if err := json.Unmarshal([]byte(ls[0]), &h); err != nil {
		t.Fatalf("header %q: %v", ls[0], err)
	}
	var evs [][3]any
	for _, l := range ls[1:] {
		var ev [3]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if _, ok := ev[0].(float64); !ok {
			t.Fatalf("line %q: time is not a number", l)
		}
		evs = append(evs, ev)
	}
	return h, evs
}

func find(evs [][3]any, code string) []string {
	var out []string
	for _, ev := range evs {
		if ev[1] == code {
			out = append(out, ev[2].(string))
		}
	}
	return out
}

func TestExportV2(t *testing.T) {
	h, evs := cast(t, 2)
	if h["version"] != 2.0 || h["width"] != 80.0 || h["height"] != 24.0 || h["timestamp"] != float64(epoch.Unix()) {
		t.Fatalf("header %v", h)
	}
	if env, _ := h["env"].(map[string]any); env["TERM"] != "xterm-256color" {
		t.Fatalf("header env %v", h["env"])
	}
	prev := 0.0
	for _, ev := range evs {
		if ev[0].(float64) < prev {
			t.Fatalf("time goes back: %v after %v", ev[0], prev)
		}
		prev = ev[0].(float64)
	}
	if prev != 1.4 {
		t.Fatalf("last event at %v, want 1.4 (the exit's time)", prev)
	}
	checkEvents(t, evs)
	if len(find(evs, "x")) != 0 {
		t.Fatal("v2 has an x event")
	}
	if m := find(evs, "m"); m[len(m)-1] != "exit 3" {
		t.Fatalf("v2 exit marker: %q", m)
	}
}

func TestExportV3(t *testing.T) {
	h, evs := cast(t, 3)
	term, _ := h["term"].(map[string]any)
	if h["version"] != 3.0 || term["cols"] != 80.0 || term["rows"] != 24.0 || term["type"] != "xterm-256color" || h["timestamp"] != float64(epoch.Unix()) {
		t.Fatalf("header %v", h)
	}
	sum := 0.0
	for _, ev := range evs {
		if ev[0].(float64) < 0 {
			t.Fatalf("negative interval %v", ev[0])
		}
		sum += ev[0].(float64)
	}
	if sum < 1.3999 || sum > 1.4001 {
		t.Fatalf("intervals add up to %v, want 1.4", sum)
	}
	checkEvents(t, evs)
	if x := find(evs, "x"); len(x) != 1 || x[0] != "3" || evs[len(evs)-1][1] != "x" {
		t.Fatalf("x events %q, want one \"3\" at the end", x)
	}
}

// checkEvents holds what both versions share.
func checkEvents(t *testing.T, evs [][3]any) {
	t.Helper()
	out := strings.Join(find(evs, "o"), "")
	if !strings.Contains(out, "café\r\n") || strings.Contains(out, "\uFFFD") {
		t.Fatalf("output %q: the é split across two reads is not joined", out)
	}
	if want := "$ echo café\r\ncafé\r\n\x1b[1;31mred\x1b[0m bye\r\n"; out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	if in := find(evs, "i"); strings.Join(in, "|") != "echo café\r|******|ls\r" {
		t.Fatalf("input %q", in)
	}
	if r := find(evs, "r"); len(r) != 1 || r[0] != "100x30" {
		t.Fatalf("resizes %q", r)
	}
	m := find(evs, "m")
	if len(m) < 4 || m[0] != "send #7: echo café (+1 lines)" || m[1] != "settled #7: exit 0, 1.5s, prompt" ||
		m[2] != "signal SIGINT" || m[3] != "checkpoint one" {
		t.Fatalf("markers %q", m)
	}
}

// TestCarry: a character split at every place, and across three events.
func TestCarry(t *testing.T) {
	text := "a€b😀c"
	for i := range len(text) + 1 {
		for j := i; j <= len(text); j++ {
			var c utf8Carry
			got := c.take(text[:i]) + c.take(text[i:j]) + c.take(text[j:]) + c.rest()
			if got != text {
				t.Fatalf("split at %d,%d: %q", i, j, got)
			}
		}
	}
	var c utf8Carry
	if got := c.take("x\xff\xc3") + c.rest(); got != "x\uFFFD\uFFFD" {
		t.Fatalf("invalid bytes: %q", got)
	}
}

// TestExportFromCut: a record whose oldest segments were cut exports from
// its checkpoint: the header from it, the screen first.
func TestExportFromCut(t *testing.T) {
	evs := []Event{{Seq: 1, Kind: KindStart, Rows: 24, Cols: 80, Start: &Start{Term: "xterm"}}}
	for i := range 300 {
		evs = append(evs, Event{Seq: uint64(i + 2), Kind: KindOutput, Data: "some output line\r\n"})
	}
	evs = append(evs, Event{Seq: 302, Kind: KindResize, Rows: 40, Cols: 120})
	for i := range 100 {
		evs = append(evs, Event{Seq: uint64(i + 303), Kind: KindOutput, Data: "after the resize\r\n"})
	}
	path, _ := writeRecord(t, t.TempDir(), Options{MaxBytes: 8 << 10, SegmentBytes: 2 << 10, Screens: true}, evs)
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	if err := ExportV3(&b, r); err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(b.String(), "\n")
	if !strings.Contains(ls[0], `"term":{"cols":120,"rows":40,"type":"xterm"}`) || !strings.Contains(ls[1], `\u001b[2Jscreen after `) {
		t.Fatalf("export from the cut begins\n%s\n%s", ls[0], ls[1])
	}
}

// TestExportIncomplete: a record cut by a crash exports what verifies and
// says it is incomplete.
func TestExportIncomplete(t *testing.T) {
	path, _ := writeRecord(t, t.TempDir(), Options{}, session())
	ls := lines(t, path)
	var b bytes.Buffer
	err := ExportV3(&b, NewReader(bytes.NewReader(bytes.Join(ls[:6], nil)), nil))
	var ie *IncompleteError
	if !errors.As(err, &ie) || ie.Verified != 6 {
		t.Fatalf("%v, want incomplete at 6", err)
	}
	if !strings.Contains(b.String(), `"é\r\n"`) {
		t.Fatalf("the verified output is missing:\n%s", b.String())
	}
}

// TestExportEmpty: a record with nothing to show still exports an event,
// an empty output at 0: asciinema-player 3.x refuses a header alone
// (cmd/ptyrec's TestAsciinemaPlayerParses runs it on a real session).
func TestExportEmpty(t *testing.T) {
	start := Event{Seq: 1, Mono: 2 * time.Second, Wall: epoch, Kind: KindStart, Rows: 24, Cols: 80, Start: &Start{Term: "xterm"}}
	prompt := Event{Seq: 2, Mono: 3 * time.Second, Wall: epoch.Add(time.Second), Kind: KindPrompt, ExitCode: intp(0)}
	path, _ := writeRecord(t, t.TempDir(), Options{}, []Event{start, prompt})
	for _, export := range []func(io.Writer, *Reader) error{ExportV3, ExportV2} {
		r, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		err = export(&b, r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ls := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); len(ls) != 2 || ls[1] != `[0.000000, "o", ""]` {
			t.Fatalf("export of an empty record:\n%s", b.String())
		}
	}
}

// TestExportSignalExit: a shell killed by a signal ends the v3 export with
// asciicast v3's exit event, the status a shell gives such a death (128 +
// the signal's number: SIGHUP, 1, is 129), and no marker; v2, without an
// exit event, keeps the marker.
func TestExportSignalExit(t *testing.T) {
	evs := session()
	evs[len(evs)-1].Exit = &Exit{Signal: "SIGHUP"}
	path, _ := writeRecord(t, t.TempDir(), Options{}, evs)
	for _, version := range []int{3, 2} {
		r, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		export := ExportV3
		if version == 2 {
			export = ExportV2
		}
		if err := export(&b, r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		ls := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		last := ls[len(ls)-1]
		switch {
		case version == 3 && (!strings.HasSuffix(last, `, "x", "129"]`) || strings.Contains(b.String(), "killed by")):
			t.Fatalf("v3: last event %s, want the exit event \"129\" and no marker\n%s", last, b.String())
		case version == 2 && (last != `[1.400000, "m", "exit: killed by SIGHUP"]` || strings.Contains(b.String(), `"x"`)):
			t.Fatalf("v2: last event %s, want the marker\n%s", last, b.String())
		}
	}
}
