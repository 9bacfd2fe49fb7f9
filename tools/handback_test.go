package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

func testHandback() *messages.Handback {
	since := time.Date(2026, 12, 3, 12, 1, 5, 0, time.UTC)
	return &messages.Handback{
		People: []string{"operator"}, Reason: messages.HandbackReturned,
		Since: since, Until: since.Add(2*time.Minute + 5*time.Second),
		FromSeq: 100, ToSeq: 180, FromCursor: 40, ToCursor: 52,
		Lines:     []messages.TypedLine{{Text: "make test"}, {Secret: true, Len: 8}},
		ExitCodes: []int{0, 1},
	}
}

// The handback's sentence comes first, then the lines typed; a secret
// line shows only its length.
func TestRenderHandbackGolden(t *testing.T) {
	h := testHandback()
	got := renderSend(messages.SendResult{Viewport: "$ ", WaitReason: messages.WaitStdinRead, Status: messages.Running, Handback: h}, 1000)
	want := "A person (operator) had control of this terminal from 12:01:05 to 12:03:10 UTC (handed back): they typed 2 lines (exit codes 0, 1). Read from cursor 40 (terminal_read) to see what happened.\n" +
		"  typed: \"make test\"\n" +
		"  typed: (secret, 8 characters)\n" +
		"$ \n[wait: stdin_read]\n[session: running]"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}

	h.HalfTyped, h.Reason, h.Truncated = "git pu", messages.HandbackIdle, true
	h.People = []string{"ann", "bob"}
	h.ExitCodes = []int{2}
	h.Until = h.Since.Add(25 * time.Hour)
	for _, c := range []struct {
		name, got, want string
	}{
		{"wait", handbackSummary(h, false),
			"People (ann, bob) had control of this terminal from 2026-12-03 12:01:05 to 2026-12-04 13:01:05 UTC (their idle timeout ran out): they typed 2 lines (exit code 2); a half-typed line (\"git pu\") is left at the prompt: it is discarded before your next send; their earliest events are no longer retained (exit codes may be missing). Read from cursor 40 (terminal_read) to see what happened."},
		{"send", handbackSummary(h, true),
			"People (ann, bob) had control of this terminal from 2026-12-03 12:01:05 to 2026-12-04 13:01:05 UTC (their idle timeout ran out): they typed 2 lines (exit code 2); a half-typed line (\"git pu\") was discarded before this send; their earliest events are no longer retained (exit codes may be missing). Read from cursor 40 (terminal_read) to see what happened."},
		{"nothing", handbackSummary(&messages.Handback{}, false),
			"A person had control of this terminal: they typed no lines. Read from cursor 0 (terminal_read) to see what happened."},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got  %q\nwant %q", c.name, c.got, c.want)
		}
	}
	// A send whose result reports the discarded line says so.
	got = renderSend(messages.SendResult{WaitReason: messages.WaitStdinRead, Status: messages.Running, ForeignInput: "git pu", Handback: h}, 4000)
	if !strings.Contains(got, "was discarded before this send") || !strings.Contains(got, `[discarded input nobody sent, waiting at the prompt before this command: "git pu"]`) {
		t.Errorf("send with the half-typed line discarded: %q", got)
	}
}

// A send that settled because a person took over says so, and whether
// the command may still run.
func TestRenderTakenOver(t *testing.T) {
	got := renderSend(messages.SendResult{Viewport: "building", WaitReason: messages.WaitInferredIdle, Cause: messages.CauseTakenOver, Status: messages.Running}, 1000)
	want := "building\n[wait: inferred_idle]\n[cause: taken_over: a person took control of the terminal; the command may still be running; your input is refused (CONTROL_HELD) until they hand it back]\n[session: running]"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = renderSend(messages.SendResult{Viewport: ">>> ", WaitReason: messages.WaitStdinRead, Cause: messages.CauseTakenOver, Reader: "python3", Status: messages.Running}, 1000)
	if !strings.Contains(got, "[cause: taken_over: a person took control of the terminal while it waited for input;") || strings.Contains(got, "may still be running") {
		t.Errorf("at an input wait: %q", got)
	}
}

// A secret line's text never shows, in the text or the value, even when
// the runtime left it in (a bug there must not leak here).
func TestHandbackSecretNeverShown(t *testing.T) {
	h := testHandback()
	h.Lines = append(h.Lines, messages.TypedLine{Text: "hunter2", Secret: true, Len: 7})
	text := renderSend(messages.SendResult{WaitReason: messages.WaitStdinRead, Status: messages.Running, Handback: h}, 4000)
	v, err := json.Marshal(handbackValue(h))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{text, string(v)} {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("a secret line's text shows: %s", s)
		}
	}
	if !strings.Contains(text, "  typed: (secret, 7 characters)\n") {
		t.Errorf("text: %q", text)
	}
	want := `"lines":[{"text":"make test"},{"secret":true,"len":8},{"secret":true,"len":7}]`
	if !strings.Contains(string(v), want) {
		t.Errorf("value %s\nwant %s", v, want)
	}
}

// The value's JSON names are the model-facing contract; an empty line is
// {"text":""}, lists are never null.
func TestHandbackValue(t *testing.T) {
	h := testHandback()
	h.Lines = append(h.Lines, messages.TypedLine{})
	h.HalfTyped = "ls -"
	b, err := json.Marshal(ForegroundSendValue{Kind: "foreground", Handback: handbackValue(h)})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Handback map[string]any `json:"handback"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"exitCodes":[0,1],"fromCursor":40,"fromSeq":100,"halfTyped":"ls -","lines":[{"text":"make test"},{"len":8,"secret":true},{"text":""}],"people":["operator"],"reason":"returned","since":"2026-12-03T12:01:05Z","toCursor":52,"toSeq":180,"truncated":false,"until":"2026-12-03T12:03:10Z"}`
	if g, _ := json.Marshal(got.Handback); string(g) != want {
		t.Errorf("handback\n got  %s\nwant %s", g, want)
	}
	empty, _ := json.Marshal(handbackValue(&messages.Handback{Reason: messages.HandbackIdle}))
	if s := string(empty); !strings.Contains(s, `"lines":[]`) || !strings.Contains(s, `"exitCodes":[]`) || !strings.Contains(s, `"people":[]`) || strings.Contains(s, "since") {
		t.Errorf("empty handback: %s", s)
	}
	if b, _ := json.Marshal(ReadValue{}); strings.Contains(string(b), "handback") {
		t.Errorf("no handback: %s", b)
	}
}

// However much the people typed, the text shows at most
// handbackTextLines lines, each cut, and says how many were left out;
// the value keeps the newest HandbackValueLines, each cut.
func TestHandbackBounds(t *testing.T) {
	h := testHandback()
	h.Lines = nil
	for i := range 500 {
		h.Lines = append(h.Lines, messages.TypedLine{Text: fmt.Sprintf("line %d ", i) + strings.Repeat("é", 3000)})
	}
	for i := range 50 {
		h.ExitCodes = append(h.ExitCodes, i)
	}
	h.People = []string{"a", "b", "c", "d", "e", "f", "g"}
	h.HalfTyped = strings.Repeat("h", 5000)
	text := renderHandback(h, false, 1<<20)
	if n := strings.Count(text, "  typed: "); n != handbackTextLines {
		t.Errorf("%d lines shown, want %d", n, handbackTextLines)
	}
	if !strings.Contains(text, "  (480 earlier line(s) left out)\n") || !strings.Contains(text, `"line 499 `) || strings.Contains(text, `"line 479 `) {
		t.Errorf("not the newest lines, or no count of those left out: %.400q", text)
	}
	if !strings.Contains(text, "People (a, b, c, d, e and 2 more)") || !strings.Contains(text, "(the last 10 of 52 exit codes: 40, 41, ") {
		t.Errorf("people or exit codes: %.400q", text)
	}
	if len(text) > 4000 {
		t.Errorf("the handback's text is %d bytes", len(text))
	}
	for l := range strings.SplitSeq(text, "\n") {
		if len(l) > 600 {
			t.Errorf("a line of %d bytes: %.80q", len(l), l)
		}
	}
	v := handbackValue(h)
	if len(v.Lines) != HandbackValueLines || v.LinesOmitted != 300 || !strings.HasPrefix(*v.Lines[0].Text, "line 300 ") {
		t.Errorf("value: %d lines, %d omitted, first %.20q", len(v.Lines), v.LinesOmitted, *v.Lines[0].Text)
	}
	for _, l := range v.Lines {
		if len(*l.Text) > HandbackValueLineBytes+len("…") || !utf8.ValidString(*l.Text) {
			t.Fatalf("a line of %d bytes in the value", len(*l.Text))
		}
	}
	if len(v.HalfTyped) > HandbackValueLineBytes+len("…") {
		t.Errorf("halfTyped of %d bytes", len(v.HalfTyped))
	}

	// Within every cap, from the smallest: the result fits, is valid
	// UTF-8, and the wait reason and session status still show; the
	// handback takes at most half.
	r := messages.SendResult{Viewport: strings.Repeat("out\n", 100), WaitReason: messages.WaitStdinRead, Status: messages.Running, Handback: h}
	rr := messages.ReadResult{Text: strings.Repeat("é€😀x\n", 100), TotalLines: 9, Handback: h}
	for limit := MinMaxResultBytes; limit < 6000; limit += 13 {
		hb := renderHandback(h, false, limit/2)
		if len(hb) > limit/2 || !utf8.ValidString(hb) {
			t.Fatalf("limit %d: handback of %d bytes: %q", limit, len(hb), hb)
		}
		if limit >= 200 && !strings.HasPrefix(hb, "People (a, b,") {
			t.Fatalf("limit %d: handback %q", limit, hb)
		}
		for _, s := range []string{renderSend(r, limit), withHandback(h, false, limit, readReserve, func(l int) string { return renderRead(rr, l) })} {
			if len(s) > limit || !utf8.ValidString(s) {
				t.Fatalf("limit %d: %d bytes, valid %v", limit, len(s), utf8.ValidString(s))
			}
		}
		if s := renderSend(r, limit); !strings.Contains(s, "[wait: stdin_read]") || !strings.Contains(s, "[session: running]") {
			t.Fatalf("limit %d: %q", limit, s)
		}
	}
}

// A person's hold reaches the model as an error with its code, the
// message naming who and since when, and a hint; Go callers match it.
func TestControlErrors(t *testing.T) {
	c := messages.Control{Holder: "operator", Person: true, Since: time.Date(2026, 12, 3, 12, 1, 5, 0, time.UTC), Epoch: 3}
	held := messages.ControlHeld("pty-1", c)
	got := renderError(held, 1000)
	want := "Error: CONTROL_HELD: a person (operator) holds the input of PTY session pty-1 since 2026-12-03T12:01:05Z: the agent's input, resizes, signals and close wait until they hand it back (reads and waits work)\n" +
		"[hint: a person holds this terminal; wait for them to hand it back (terminal_wait, terminal_read and terminal_screen still work)]"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Wrapped (an aborted send), it keeps its code.
	if got := renderError(fmt.Errorf("%w (%w)", ErrSendAborted, held), 1000); !strings.HasPrefix(got, "Error: CONTROL_HELD: terminal send aborted (a person (operator)") || !strings.Contains(got, "[hint: a person holds") {
		t.Errorf("wrapped: %q", got)
	}
	stale := renderError(messages.ControlStale("pty-1", 2, c), 1000)
	if !strings.HasPrefix(stale, "Error: CONTROL_STALE: control of PTY session pty-1 moved on") || !strings.Contains(stale, "\n[hint: ") {
		t.Errorf("stale: %q", stale)
	}
	if got := renderError(held, 64); len(got) > 64 || !strings.HasPrefix(got, "Error: CONTROL_HELD: ") {
		t.Errorf("cap 64: %q", got)
	}
	// Other codes keep their shape.
	if got := renderError(messages.Errorf(messages.CodeSendActive, "busy"), 1000); got != "Error: busy" {
		t.Errorf("SEND_ACTIVE: %q", got)
	}
	r := newArgRig(t).plain.fail(TerminalSend, held)
	if !r.IsError || !errors.Is(r.Err, messages.ErrControlHeld) || r.Structured != nil || r.Text != want {
		t.Errorf("fail: %+v", r)
	}
}

// The schemas name the new cause and the handback, and the tools that a
// hold refuses say so.
func TestControlInSchemas(t *testing.T) {
	rig := newArgRig(t)
	defs := map[string]Definition{}
	for _, d := range rig.plain.Definitions() {
		defs[d.Name] = d
	}
	for _, name := range []string{TerminalSend, TerminalWait} {
		out := string(defs[name].OutputSchema)
		if !strings.Contains(out, `"taken_over"`) || !strings.Contains(out, `"handback"`) || !strings.Contains(out, `"secret"`) {
			t.Errorf("%s output schema: %s", name, out)
		}
	}
	if !strings.Contains(string(defs[TerminalRead].OutputSchema), `"handback"`) {
		t.Errorf("terminal_read output schema")
	}
	for _, name := range []string{TerminalSend, TerminalResize, TerminalSignal, TerminalClose} {
		if !strings.Contains(defs[name].Description, "CONTROL_HELD") {
			t.Errorf("%s: the description does not say a person's hold refuses it", name)
		}
	}
	if !strings.Contains(Guidance, "CONTROL_HELD") {
		t.Error("Guidance says nothing of a person's hold")
	}
}
