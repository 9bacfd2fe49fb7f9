package tools

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// A person's hold on a terminal, as the model sees it: the refusal of its
// calls meanwhile (CONTROL_HELD), and, on the first result after the
// hand-back, what the people did (messages.Handback).

// HandbackValue is messages.Handback in a send's, a wait's or a read's
// value (handback): who held the terminal, from when to when, why it came
// back, the stream events and line cursors at the take and the hand-back,
// the lines typed (newest HandbackValueLines, each cut to
// HandbackValueLineBytes), the exit codes, and a line left half typed.
type HandbackValue struct {
	People     []string `json:"people"`
	Reason     string   `json:"reason"`
	Since      string   `json:"since,omitempty"`
	Until      string   `json:"until,omitempty"`
	FromSeq    uint64   `json:"fromSeq"`
	ToSeq      uint64   `json:"toSeq"`
	FromCursor uint64   `json:"fromCursor"`
	ToCursor   uint64   `json:"toCursor"`
	// Lines are the newest lines typed, oldest first; LinesOmitted counts
	// the earlier ones left out.
	Lines        []TypedLineValue `json:"lines"`
	LinesOmitted int              `json:"linesOmitted,omitempty"`
	ExitCodes    []int            `json:"exitCodes"`
	HalfTyped    string           `json:"halfTyped,omitempty"`
	Truncated    bool             `json:"truncated"`
}

// TypedLineValue is one line a person submitted: {"text": ...}, or, at a
// secret prompt, {"secret": true, "len": n} and never its text.
type TypedLineValue struct {
	Text   *string `json:"text,omitempty"`
	Secret bool    `json:"secret,omitempty"`
	Len    *int    `json:"len,omitempty"`
}

// Bounds of a handback's value: the newest lines kept, and each line's
// (and the half-typed line's) text, in bytes ("…" marks a cut).
const (
	HandbackValueLines     = 200
	HandbackValueLineBytes = 1024
)

// Bounds of a handback's text: lines shown (the newest), each line's
// bytes, people named, exit codes listed.
const (
	handbackTextLines     = 20
	handbackTextLineBytes = 120
	handbackTextPeople    = 5
	handbackTextCodes     = 10
)

func handbackValue(h *messages.Handback) *HandbackValue {
	if h == nil {
		return nil
	}
	v := &HandbackValue{
		People: append([]string{}, h.People...), Reason: h.Reason,
		FromSeq: h.FromSeq, ToSeq: h.ToSeq, FromCursor: h.FromCursor, ToCursor: h.ToCursor,
		Lines: []TypedLineValue{}, ExitCodes: append([]int{}, h.ExitCodes...),
		HalfTyped: clip(h.HalfTyped, HandbackValueLineBytes), Truncated: h.Truncated,
	}
	if !h.Since.IsZero() {
		v.Since = h.Since.UTC().Format(time.RFC3339Nano)
	}
	if !h.Until.IsZero() {
		v.Until = h.Until.UTC().Format(time.RFC3339Nano)
	}
	lines := h.Lines
	if len(lines) > HandbackValueLines {
		v.LinesOmitted = len(lines) - HandbackValueLines
		lines = lines[v.LinesOmitted:]
	}
	for _, l := range lines {
		if l.Secret {
			n := l.Len
			v.Lines = append(v.Lines, TypedLineValue{Secret: true, Len: &n})
			continue
		}
		s := clip(l.Text, HandbackValueLineBytes)
		v.Lines = append(v.Lines, TypedLineValue{Text: &s})
	}
	return v
}

// handbackSchema describes HandbackValue.
func handbackSchema() schema {
	return schema{
		"type":        "object",
		"description": "present on the first result after a person held this terminal (took control from the console) and handed it back: what they did meanwhile. Read from fromCursor (terminal_read cursor) to see the output",
		"properties": schema{
			"people":     schema{"type": "array", "items": schema{"type": "string"}, "description": "who held the terminal, in the order they took control"},
			"reason":     schema{"type": "string", "enum": []string{messages.HandbackReturned, messages.HandbackIdle}, "description": "returned: the person handed it back; idle: their idle timeout ran out"},
			"since":      schema{"type": "string"},
			"until":      schema{"type": "string"},
			"fromSeq":    schema{"type": "integer"},
			"toSeq":      schema{"type": "integer"},
			"fromCursor": schema{"type": "integer", "description": "the line cursor when they took control: terminal_read with it shows what happened"},
			"toCursor":   schema{"type": "integer"},
			"lines": schema{"type": "array", "description": "the lines they submitted, oldest first (the newest 200): {text}, or {secret:true,len} for a line typed at a secret prompt (its text is never shown)", "items": schema{
				"type": "object", "properties": schema{"text": schema{"type": "string"}, "secret": schema{"type": "boolean"}, "len": schema{"type": "integer"}},
			}},
			"linesOmitted": schema{"type": "integer", "description": "earlier lines left out of lines"},
			"exitCodes":    schema{"type": "array", "items": schema{"type": "integer"}, "description": "exit codes of the commands that ran meanwhile, in order"},
			"halfTyped":    schema{"type": "string", "description": "a line they left unsubmitted: it is discarded before your next send writes (that send's foreignInput shows it)"},
			"truncated":    schema{"type": "boolean", "description": "some of their events are no longer retained: exitCodes may miss the earliest"},
		},
		"required": []string{"people", "reason", "fromCursor", "toCursor", "lines", "exitCodes", "truncated"},
	}
}

// renderHandback is the text of a handback, within limit bytes: a
// sentence, then the newest lines typed (quoted; a secret line only as
// its length), fewer lines, or the sentence alone (cut), as limit allows;
// "" under a few bytes. send: the result is a send's, whose writing
// discarded a half-typed line.
func renderHandback(h *messages.Handback, send bool, limit int) string {
	summary := handbackSummary(h, send)
	lines := h.Lines
	omitted := 0
	if len(lines) > handbackTextLines {
		omitted = len(lines) - handbackTextLines
		lines = lines[omitted:]
	}
	shown := make([]string, len(lines))
	total := 0
	for i, l := range lines {
		if l.Secret {
			shown[i] = "  typed: (secret, " + strconv.Itoa(l.Len) + " characters)\n"
		} else {
			shown[i] = "  typed: " + strconv.Quote(clip(l.Text, handbackTextLineBytes)) + "\n"
		}
		total += len(shown[i])
	}
	// Too long: the oldest lines shown go first.
	for ; len(shown) > 0; omitted, total, shown = omitted+1, total-len(shown[0]), shown[1:] {
		head := summary + "\n"
		if omitted > 0 {
			head += "  (" + strconv.Itoa(omitted) + " earlier line(s) left out)\n"
		}
		if len(head)+total <= limit {
			return head + strings.Join(shown, "")
		}
	}
	if len(summary)+1 <= limit {
		return summary + "\n"
	}
	if limit < 8 {
		return ""
	}
	return summary[:textcut.Head(summary, limit-4)] + "…\n"
}

// handbackSummary is the handback's sentence: who held the terminal,
// when, why it came back, what they typed and ran, a half-typed line, and
// where to read what happened.
func handbackSummary(h *messages.Handback, send bool) string {
	var b strings.Builder
	writeHandbackWho(&b, h)
	b.WriteString(": they typed ")
	switch n := len(h.Lines); n {
	case 0:
		b.WriteString("no lines")
	case 1:
		b.WriteString("1 line")
	default:
		b.WriteString(strconv.Itoa(n) + " lines")
	}
	writeHandbackCodes(&b, h.ExitCodes)
	if h.HalfTyped != "" {
		q := strconv.Quote(clip(h.HalfTyped, 60))
		if send {
			b.WriteString("; a half-typed line (" + q + ") was discarded before this send")
		} else {
			b.WriteString("; a half-typed line (" + q + ") is left at the prompt: it is discarded before your next send")
		}
	}
	if h.Truncated {
		b.WriteString("; their earliest events are no longer retained (exit codes may be missing)")
	}
	b.WriteString(". Read from cursor " + strconv.FormatUint(h.FromCursor, 10) + " (terminal_read) to see what happened.")
	return b.String()
}

// writeHandbackWho writes who held the terminal, when, and how it
// ended.
func writeHandbackWho(b *strings.Builder, h *messages.Handback) {
	switch people := h.People; {
	case len(people) == 0:
		b.WriteString("A person")
	case len(people) == 1:
		b.WriteString("A person (" + clip(people[0], 64) + ")")
	default:
		b.WriteString("People (")
		for i, p := range people[:min(len(people), handbackTextPeople)] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(clip(p, 64))
		}
		if len(people) > handbackTextPeople {
			b.WriteString(" and " + strconv.Itoa(len(people)-handbackTextPeople) + " more")
		}
		b.WriteString(")")
	}
	b.WriteString(" had control of this terminal")
	if !h.Since.IsZero() && !h.Until.IsZero() {
		since, until := h.Since.UTC(), h.Until.UTC()
		layout := "15:04:05"
		if since.YearDay() != until.YearDay() || since.Year() != until.Year() {
			layout = "2006-01-02 15:04:05"
		}
		b.WriteString(" from " + since.Format(layout) + " to " + until.Format(layout) + " UTC")
	}
	switch h.Reason {
	case messages.HandbackReturned:
		b.WriteString(" (handed back)")
	case messages.HandbackIdle:
		b.WriteString(" (their idle timeout ran out)")
	case "":
	default:
		b.WriteString(" (" + clip(h.Reason, 32) + ")")
	}
}

// writeHandbackCodes writes the exit codes of the lines they typed, the
// last handbackTextCodes of them.
func writeHandbackCodes(b *strings.Builder, codes []int) {
	if len(codes) == 0 {
		return
	}
	if len(codes) > handbackTextCodes {
		b.WriteString(" (the last " + strconv.Itoa(handbackTextCodes) + " of " + strconv.Itoa(len(codes)) + " exit codes: ")
		codes = codes[len(codes)-handbackTextCodes:]
	} else if len(codes) == 1 {
		b.WriteString(" (exit code ")
	} else {
		b.WriteString(" (exit codes ")
	}
	for i, c := range codes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(c))
	}
	b.WriteString(")")
}

// withHandback puts a handback's text before a result's text, which
// render draws within what is left of limit; the handback takes at most
// half of limit, and leaves the result at least reserve bytes (under a
// tiny cap it is left out of the text: the value has it).
func withHandback(h *messages.Handback, send bool, limit, reserve int, render func(limit int) string) string {
	if h == nil {
		return render(limit)
	}
	hb := renderHandback(h, send, min(limit/2, limit-reserve))
	return hb + render(limit-len(hb))
}

// controlHint follows a CONTROL_HELD refusal.
const controlHint = "a person holds this terminal; wait for them to hand it back (terminal_wait, terminal_read and terminal_screen still work)"

// staleHint follows a CONTROL_STALE refusal.
const staleHint = "control of this terminal changed hands; terminal_screen shows its state now"

// controlError is the text of a refusal for a person's hold on the
// terminal: the code, the message (who holds it and since when), a hint;
// ok false for any other error.
func controlError(err error) (string, bool) {
	var e *messages.Error
	if !errors.As(err, &e) {
		return "", false
	}
	switch e.Code {
	case messages.CodeControlHeld:
		return "Error: " + string(e.Code) + ": " + err.Error() + "\n[hint: " + controlHint + "]", true
	case messages.CodeControlStale:
		return "Error: " + string(e.Code) + ": " + err.Error() + "\n[hint: " + staleHint + "]", true
	}
	return "", false
}
