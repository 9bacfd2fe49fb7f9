package tools

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// Marker ends every text that was cut (19 bytes).
const Marker = "\n[output truncated]"

// deltaMarker flags lost output inside a background task's text.
const deltaMarker = "[output truncated]"

// finalize bounds any text to limit bytes: the head, cut on a code point
// boundary, plus Marker (unless the head already ends with it).
func finalize(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	h := s[:textcut.Head(s, limit-len(Marker))]
	if strings.HasSuffix(h, Marker) {
		return h
	}
	return h + Marker
}

// tailWithMeta renders body+meta (+Marker if truncated); over the limit it
// keeps the tail of body, all of meta, and Marker.
func tailWithMeta(body, meta string, truncated bool, limit int) string {
	full := body + meta
	if truncated {
		full += Marker
	}
	if len(full) <= limit {
		return full
	}
	room := limit - len(meta) - len(Marker)
	if room < 0 {
		return finalize(full, limit)
	}
	return body[textcut.Tail(body, room):] + meta + Marker
}

func renderOpen(r messages.SpawnResult, limit int) string {
	prefix := "started terminal session " + string(r.SessionID)
	if r.Name != "" {
		prefix += " (" + r.Name + ")"
	}
	prefix += " [type: " + r.Type + "]\n"
	motd := r.Motd
	if motd == "" {
		motd = "(no startup output)"
	}
	if len(prefix)+len(motd) <= limit {
		return prefix + motd
	}
	room := limit - len(prefix) - len(Marker)
	if room < 0 {
		return finalize(prefix+motd, limit)
	}
	return prefix + motd[textcut.Tail(motd, room):] + Marker
}

// sendMeta is the metadata block of a foreground send: wait reason, the
// exit code and the reader where known, the session status; at a secret
// prompt, secretURL (when there is one) is the link for the person.
func sendMeta(r messages.SendResult, secretURL string) string {
	var b strings.Builder
	b.WriteString("\n[wait: ")
	b.WriteString(string(r.WaitReason))
	b.WriteString("]")
	if r.Cause == messages.CauseTakenOver {
		// A person took the terminal over from the console: the send
		// settled at once, whatever the program was doing.
		b.WriteString("\n[cause: taken_over: a person took control of the terminal")
		if r.WaitReason == messages.WaitStdinRead {
			b.WriteString(" while it waited for input")
		} else {
			b.WriteString("; the command may still be running")
		}
		b.WriteString("; your input is refused (CONTROL_HELD) until they hand it back]")
	} else if r.Cause != "" && r.Cause != messages.CausePrompt && r.Cause != messages.CauseInput {
		// The wait reason alone does not say it: a cancel, a close, an
		// exit, a deadline or silence (the program may still run).
		b.WriteString("\n[cause: ")
		b.WriteString(string(r.Cause))
		b.WriteString("]")
	}
	if r.ExitCode != nil {
		b.WriteString("\n[exit code: ")
		b.WriteString(strconv.Itoa(*r.ExitCode))
		b.WriteString("]")
	}
	if r.Reader != "" {
		b.WriteString("\n[reader: ")
		b.WriteString(r.Reader)
		b.WriteString("]")
	}
	b.WriteString("\n[session: ")
	b.WriteString(r.Status.String())
	b.WriteString("]")
	if len(r.Running) > 0 {
		b.WriteString("\n[left running:")
		for i, p := range r.Running {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" pid ")
			b.WriteString(strconv.Itoa(p.PID))
			b.WriteString(" ")
			b.WriteString(p.Command)
			if p.Detached {
				b.WriteString(" (detached)")
			}
		}
		b.WriteString("]")
	}
	if r.ForeignInput != "" {
		b.WriteString("\n[discarded input nobody sent, waiting at the prompt before this command: ")
		b.WriteString(strconv.Quote(r.ForeignInput))
		b.WriteString("]")
	}
	if r.SecretEntered {
		// Said before a prompt that follows: the program may ask again
		// (a retry, a second passphrase).
		b.WriteString("\n[secret entered: A person entered the secret at the prompt.]")
	}
	switch {
	case r.Secret && secretURL != "":
		// The model holds the link but cannot use it (the page needs the
		// person's console login); it is told not to try to type the
		// secret itself.
		b.WriteString("\n[secret prompt: The terminal waits for a secret")
		if line := strings.TrimSpace(promptLine(r)); line != "" {
			b.WriteString(" (")
			b.WriteString(strconv.Quote(clip(line, 120)))
			b.WriteString(")")
		}
		b.WriteString(". Do not type it yourself: give the user this link to type it: ")
		b.WriteString(secretURL)
		b.WriteString(" (it needs their console login). Then call terminal_wait.]")
	case r.Secret:
		b.WriteString("\n[secret prompt: it waits for a password or passphrase with echo off; ask the user to type it, never type a credential yourself]")
	}
	if r.Unwritten > 0 {
		b.WriteString("\n[not written: ")
		b.WriteString(strconv.Itoa(r.Unwritten))
		b.WriteString(" line(s), from ")
		b.WriteString(strconv.Quote(clip(r.FirstUnwritten, 80)))
		b.WriteString("]")
	}
	return b.String()
}

// renderScreen frames a screen so that it reads as a screen, not a log:
// a ruler line with the size and cursor, the rows (trailing empty rows
// dropped), a closing ruler.
func renderScreen(s *messages.Screen, limit int) string {
	rows := s.Rows
	for len(rows) > 0 && rows[len(rows)-1] == "" && len(rows)-1 > s.CursorRow {
		rows = rows[:len(rows)-1]
	}
	kind := "screen"
	if s.AltScreen {
		kind = "full-screen program"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "┌── %s %dx%d, cursor at row %d col %d ──\n", kind, s.Height, s.Width, s.CursorRow+1, s.CursorCol+1)
	for _, r := range rows {
		b.WriteString("│")
		b.WriteString(r)
		b.WriteString("\n")
	}
	b.WriteString("└──")
	return finalize(b.String(), limit)
}

// promptLine is the secret prompt's line on the screen, when known.
func promptLine(r messages.SendResult) string {
	if r.SecretPrompt == nil {
		return ""
	}
	return r.SecretPrompt.Line
}

// renderSend is a send's (or a wait's) text: the handback first, when
// the result carries one, then the output and the metadata. A half-typed
// line was discarded when the result reports foreign input (only a send,
// which writes, discards: then its ForeignInput holds the line).
func renderSend(r messages.SendResult, limit int) string { return renderSendLink(r, "", limit) }

// renderSendLink is renderSend with the secret link for a person, when
// the result is at a secret prompt and one was made.
func renderSendLink(r messages.SendResult, secretURL string, limit int) string {
	// The result keeps room for its metadata without the optional lines.
	least := r
	least.Reader, least.ExitCode = "", nil
	reserve := len(sendMeta(least, secretURL)) + len(Marker) + 1
	return withHandback(r.Handback, r.ForeignInput != "", limit, reserve, func(limit int) string { return renderSendBody(r, secretURL, limit) })
}

// readReserve is the room a read's text keeps beside a handback.
const readReserve = 64

func renderSendBody(r messages.SendResult, secretURL string, limit int) string {
	if r.Screen != nil {
		// A full-screen program: the screen is what it shows; its redraw
		// bytes are no log.
		meta := sendMeta(r, secretURL)
		return finalize(renderScreen(r.Screen, limit-len(meta))+meta, limit)
	}
	body := r.Viewport
	if body == "" {
		body = "(no new output)"
	}
	// Under a tiny cap the optional lines go first (reader, then exit
	// code), so the wait reason and the session status always show.
	meta := sendMeta(r, secretURL)
	if len(body)+len(meta)+len(Marker) > limit {
		for _, drop := range []func(*messages.SendResult){
			func(r *messages.SendResult) { r.Reader = "" },
			func(r *messages.SendResult) { r.ExitCode = nil },
		} {
			if len(meta)+len(Marker) <= limit {
				break
			}
			drop(&r)
			meta = sendMeta(r, secretURL)
		}
	}
	return tailWithMeta(body, meta, r.Truncated, limit)
}

func renderRead(r messages.ReadResult, limit int) string {
	body := r.Text
	if body == "" {
		body = "(no retained output)"
	}
	meta := "\n[lines: " + strconv.Itoa(r.LineBegin) + "-" + strconv.Itoa(r.LineEnd) + " of " + strconv.Itoa(r.TotalLines) + "]"
	return tailWithMeta(body, meta, r.Truncated, limit)
}

// cursorMetaRoom is what renderCursorRead's metadata can take at most.
const cursorMetaRoom = 160

// fitCursorRead keeps a cursor read within the result bound without
// moving its cursor past a line the caller is not shown: it keeps the
// oldest whole lines that fit (a page must never lose its front, as a
// paged read does), and the cursor then stops after them.
func fitCursorRead(r messages.ReadResult, from uint64, limit int) messages.ReadResult {
	room := limit - cursorMetaRoom
	if len(r.Text) <= room {
		return r
	}
	start := max(from, r.OmittedTo)
	cut := -1
	if room > 0 {
		cut = strings.LastIndexByte(r.Text[:room], '\n')
	}
	if cut < 0 {
		// Not one whole line fits: show nothing, and move nowhere.
		r.Text, r.Cursor, r.More = "", start, true
		return r
	}
	r.Text = r.Text[:cut+1]
	r.Cursor = start + uint64(strings.Count(r.Text, "\n"))
	r.More = true
	return r
}

func renderCursorRead(r messages.ReadResult, limit int) string {
	var b strings.Builder
	b.WriteString(r.Text)
	if r.Text == "" {
		b.WriteString("(no new output)")
	}
	if r.OmittedTo > r.OmittedFrom {
		fmt.Fprintf(&b, "\n[lines %d-%d are no longer retained]", r.OmittedFrom, r.OmittedTo)
	}
	fmt.Fprintf(&b, "\n[cursor: %d]", r.Cursor)
	if r.More {
		fmt.Fprintf(&b, "\n[more output: read again with cursor %d]", r.Cursor)
	}
	return finalize(b.String(), limit)
}

func renderList(ss []messages.Snapshot, limit int) string {
	if len(ss) == 0 {
		return "(no terminal sessions)"
	}
	lines := make([]string, len(ss))
	for i, s := range ss {
		l := string(s.SessionID)
		if s.Name != "" {
			l += " (" + s.Name + ")"
		}
		l += " [" + s.Type + "] " + s.Status.String()
		if s.PID > 0 {
			l += " pid=" + strconv.Itoa(s.PID)
		}
		lines[i] = l
	}
	return finalize(strings.Join(lines, "\n"), limit)
}

// renderSignal says where the signal went, or that it was sent and not
// delivered, and why (a program that is pid 1 of the sandbox's pid
// namespace and has no handler for it never gets it).
func renderSignal(sig messages.Signal, r messages.SignalResult, limit int) string {
	if !r.Delivered {
		why := r.Reason
		if why == "" {
			why = "the runtime gave no reason"
		}
		return finalize(string(sig)+" not delivered to foreground process group "+strconv.Itoa(r.TargetPgid)+": "+why, limit)
	}
	return finalize("delivered "+string(sig)+" to foreground process group "+strconv.Itoa(r.TargetPgid), limit)
}

// renderClose says the session closed and, when it was recorded, where
// its record is: a person asks the agent for it, and the agent has only
// the text when its client drops structuredContent.
func renderClose(id messages.SessionID, closed bool, rec *RecordingValue, limit int) string {
	s := "terminal session " + string(id) + " was already closing"
	if closed {
		s = "closed terminal session " + string(id)
	}
	if rec != nil {
		where := rec.Path
		switch {
		case rec.FetchError != "":
			where += " on " + rec.Host + " (not copied here: " + rec.FetchError + ")"
		case rec.HostPath != "":
			where += " (copied from " + rec.HostPath + " on " + rec.Host + ")"
		case rec.Host != "":
			where += " on " + rec.Host
		}
		s += fmt.Sprintf("\n[recording: %s, %d records, chain sha256 %s; play it: ptyrec play %s]",
			where, rec.Records, rec.SHA256, rec.Path)
	}
	return finalize(s, limit)
}

func renderAck(id messages.TaskID, limit int) string {
	return finalize("started background task "+string(id), limit)
}

// statusLine is "[status: <s>[, <detail>]]".
func statusLine(t messages.TaskSnapshot) string {
	s := "[status: " + string(t.Status)
	if t.Detail != "" {
		s += ", " + t.Detail
	}
	return s + "]"
}

// renderDelta is a task's new output, with "[output truncated]" on its own
// line when output was lost.
func renderDelta(text string, truncated bool) string {
	if !truncated {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + deltaMarker
}

func renderTaskOutput(o messages.TaskOutput, limit int) string {
	body := renderDelta(o.Text, o.Truncated)
	if body == "" {
		body = "(no new output)"
	}
	status := "\n" + statusLine(o.Task)
	if len(body)+len(status) <= limit {
		return body + status
	}
	// Over the limit: tail + Marker + status. A body that already ends
	// with the marker loses it first, so the marker appears once.
	body = strings.TrimSuffix(strings.TrimSuffix(body, deltaMarker), "\n")
	room := limit - len(Marker) - len(status)
	if room < 0 {
		return finalize(body+Marker+status, limit)
	}
	return body[textcut.Tail(body, room):] + Marker + status
}

func renderKill(id messages.TaskID, outcome messages.TaskKillOutcome, t messages.TaskSnapshot, limit int) string {
	if outcome == messages.TaskCancellationRequested {
		return finalize("requested cancellation of task "+string(id), limit)
	}
	return finalize("task "+string(id)+" had already finished "+statusLine(t), limit)
}

func renderError(err error, limit int) string {
	if s, ok := controlError(err); ok {
		return finalize(s, limit)
	}
	return finalize("Error: "+err.Error(), limit)
}
