package wire

import (
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// Conversions between package messages and the wire. Each pair is exact:
// From(To(v)) == v for every field the wire carries.

// StatusTo encodes a session status.
func StatusTo(s messages.SessionStatus) *Status {
	w := &Status{Exited: s.Exited, Signal: s.Signal}
	if s.ExitCode != nil {
		c := int64(*s.ExitCode)
		w.ExitCode = &c
	}
	return w
}

// StatusFrom decodes a session status; nil is Running.
func StatusFrom(w *Status) messages.SessionStatus {
	if w == nil {
		return messages.Running
	}
	s := messages.SessionStatus{Exited: w.Exited, Signal: w.Signal}
	if w.ExitCode != nil {
		c := int(*w.ExitCode)
		s.ExitCode = &c
	}
	return s
}

// SnapshotTo encodes a snapshot.
func SnapshotTo(s messages.Snapshot) *Snapshot {
	return &Snapshot{
		Session: string(s.SessionID), Name: s.Name, Type: s.Type, Pid: int64(s.PID),
		Status: StatusTo(s.Status), SecretPrompt: s.SecretPrompt, Activity: ActivityTo(s.Activity), Control: ControlTo(s.Control),
	}
}

// SnapshotFrom decodes a snapshot.
func SnapshotFrom(w *Snapshot) messages.Snapshot {
	if w == nil {
		return messages.Snapshot{}
	}
	return messages.Snapshot{
		SessionID: messages.SessionID(w.Session), Name: w.Name, Type: w.Type, PID: int(w.Pid),
		Status: StatusFrom(w.Status), SecretPrompt: w.SecretPrompt, Activity: ActivityFrom(w.Activity), Control: ControlFrom(w.Control),
	}
}

// SendResultTo encodes a send's result.
func SendResultTo(r messages.SendResult) *SendResult {
	w := &SendResult{
		Viewport: r.Viewport, WaitReason: string(r.WaitReason), Status: StatusTo(r.Status),
		Truncated: r.Truncated, Reader: r.Reader, ElapsedNs: int64(r.Elapsed),
		Unwritten: int64(r.Unwritten), FirstUnwritten: r.FirstUnwritten, Secret: r.Secret, ForeignInput: r.ForeignInput,
		Cause: string(r.Cause), Cursor: r.Cursor, OmittedFrom: r.OmittedFrom, OmittedTo: r.OmittedTo, Seq: r.Seq,
		Handback: HandbackTo(r.Handback), SecretPrompt: SecretPromptTo(r.SecretPrompt), SecretEntered: r.SecretEntered,
	}
	for _, p := range r.Running {
		w.Running = append(w.Running, &Process{Pid: int64(p.PID), Command: p.Command, Detached: p.Detached})
	}
	if r.Screen != nil {
		w.Screen = ScreenTo(*r.Screen)
	}
	if r.ExitCode != nil {
		c := int64(*r.ExitCode)
		w.ExitCode = &c
	}
	return w
}

// SendResultFrom decodes a send's result.
func SendResultFrom(w *SendResult) messages.SendResult {
	if w == nil {
		return messages.SendResult{}
	}
	r := messages.SendResult{
		Viewport: w.Viewport, WaitReason: messages.WaitReason(w.WaitReason), Status: StatusFrom(w.Status),
		Truncated: w.Truncated, Reader: w.Reader, Elapsed: time.Duration(w.ElapsedNs),
		Unwritten: int(w.Unwritten), FirstUnwritten: w.FirstUnwritten, Secret: w.Secret, ForeignInput: w.ForeignInput,
		Cause: messages.Cause(w.Cause), Cursor: w.Cursor, OmittedFrom: w.OmittedFrom, OmittedTo: w.OmittedTo, Seq: w.Seq,
		Handback: HandbackFrom(w.Handback), SecretPrompt: SecretPromptFrom(w.SecretPrompt), SecretEntered: w.SecretEntered,
	}
	for _, p := range w.Running {
		r.Running = append(r.Running, messages.Process{PID: int(p.Pid), Command: p.Command, Detached: p.Detached})
	}
	if w.Screen != nil {
		sc := ScreenFrom(w.Screen)
		r.Screen = &sc
	}
	if w.ExitCode != nil {
		c := int(*w.ExitCode)
		r.ExitCode = &c
	}
	return r
}

// ScreenTo encodes a screen.
func ScreenTo(sc messages.Screen) *Screen {
	return &Screen{Rows: sc.Rows, CursorRow: int64(sc.CursorRow), CursorCol: int64(sc.CursorCol),
		Height: int64(sc.Height), Width: int64(sc.Width), AltScreen: sc.AltScreen, Hash: sc.Hash, Seq: sc.Seq}
}

// ScreenFrom decodes a screen; nil is the zero Screen.
func ScreenFrom(w *Screen) messages.Screen {
	if w == nil {
		return messages.Screen{}
	}
	return messages.Screen{Rows: w.Rows, CursorRow: int(w.CursorRow), CursorCol: int(w.CursorCol),
		Height: int(w.Height), Width: int(w.Width), AltScreen: w.AltScreen, Hash: w.Hash, Seq: w.Seq}
}

// ResizeTo encodes a resize of session; controlEpoch is the hold of the
// person who resizes (0: the agent).
func ResizeTo(session messages.SessionID, rows, cols int, controlEpoch uint64) *Resize {
	return &Resize{Session: string(session), Rows: int64(rows), Cols: int64(cols), ControlEpoch: controlEpoch}
}

// ResizeFrom decodes a resize. Sizes beyond int are clamped, so the
// runtime's range check sees them out of range.
func ResizeFrom(w *Resize) (session messages.SessionID, rows, cols int, controlEpoch uint64) {
	return messages.SessionID(w.GetSession()), clampInt(w.GetRows()), clampInt(w.GetCols()), w.GetControlEpoch()
}

// ReadTo encodes a scrollback page request, keeping nil as nil.
func ReadTo(session messages.SessionID, r messages.ReadRequest) *Read {
	w := &Read{Session: string(session)}
	if r.Offset != nil {
		v := int64(*r.Offset)
		w.Offset = &v
	}
	if r.Count != nil {
		v := int64(*r.Count)
		w.Count = &v
	}
	w.Cursor = r.Cursor
	return w
}

// ReadRequestFrom decodes a scrollback page request. Values beyond int are
// clamped, so the runtime's range check (ReadRequest.Resolve) sees them.
func ReadRequestFrom(w *Read) messages.ReadRequest {
	var r messages.ReadRequest
	if w.Offset != nil {
		v := clampInt(*w.Offset)
		r.Offset = &v
	}
	if w.Count != nil {
		v := clampInt(*w.Count)
		r.Count = &v
	}
	r.Cursor = w.Cursor
	return r
}

func clampInt(v int64) int {
	const maxInt, minInt = int64(^uint(0) >> 1), -int64(^uint(0)>>1) - 1
	return int(max(minInt, min(maxInt, v)))
}

// ReadResultTo encodes a scrollback page.
func ReadResultTo(r messages.ReadResult) *ReadReply {
	return &ReadReply{Text: r.Text, TotalLines: int64(r.TotalLines), LineBegin: int64(r.LineBegin), LineEnd: int64(r.LineEnd), Truncated: r.Truncated,
		Cursor: r.Cursor, OmittedFrom: r.OmittedFrom, OmittedTo: r.OmittedTo, More: r.More, Handback: HandbackTo(r.Handback)}
}

// ReadResultFrom decodes a scrollback page.
func ReadResultFrom(w *ReadReply) messages.ReadResult {
	if w == nil {
		return messages.ReadResult{}
	}
	return messages.ReadResult{Text: w.Text, TotalLines: int(w.TotalLines), LineBegin: int(w.LineBegin), LineEnd: int(w.LineEnd), Truncated: w.Truncated,
		Cursor: w.Cursor, OmittedFrom: w.OmittedFrom, OmittedTo: w.OmittedTo, More: w.More, Handback: HandbackFrom(w.Handback)}
}

// SignalResultTo encodes a signal's outcome.
func SignalResultTo(r messages.SignalResult) *SignalReply {
	return &SignalReply{Delivered: r.Delivered, TargetPgid: int64(r.TargetPgid), Reason: r.Reason}
}

// SignalResultFrom decodes a signal's outcome. A host that predates Reason
// sends none, and reports every signal it sent delivered.
func SignalResultFrom(w *SignalReply) messages.SignalResult {
	if w == nil {
		return messages.SignalResult{}
	}
	return messages.SignalResult{Delivered: w.Delivered, TargetPgid: int(w.TargetPgid), Reason: w.Reason}
}

// KillTo encodes a close's outcome.
func KillTo(closed bool, r messages.CloseReport) *KillReply {
	w := &KillReply{Closed: closed, Killed: ints64(r.Killed), Survivors: ints64(r.Survivors), Status: StatusTo(r.Status)}
	w.Recording = RecordingTo(r.Recording)
	return w
}

// RecordingTo encodes a closed record's name and chain end; nil stays nil.
func RecordingTo(rec *messages.Recording) *Recording {
	if rec == nil {
		return nil
	}
	return &Recording{Path: rec.Path, Host: rec.Host, Records: rec.Records, Sha256: rec.SHA256}
}

// RecordingFrom decodes a closed record's name and chain end; nil stays nil.
func RecordingFrom(w *Recording) *messages.Recording {
	if w == nil {
		return nil
	}
	return &messages.Recording{Path: w.Path, Host: w.Host, Records: w.Records, SHA256: w.Sha256}
}

// KillFrom decodes a close's outcome.
func KillFrom(w *KillReply) (closed bool, r messages.CloseReport) {
	if w == nil {
		return false, messages.CloseReport{}
	}
	r = messages.CloseReport{Killed: ints(w.Killed), Survivors: ints(w.Survivors), Status: StatusFrom(w.Status)}
	r.Recording = RecordingFrom(w.Recording)
	return w.Closed, r
}

func ints64(v []int) []int64 {
	if v == nil {
		return nil
	}
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func ints(v []int64) []int {
	if v == nil {
		return nil
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// StartSendTo encodes a send to session.
func StartSendTo(session string, r messages.SendRequest) *StartSend {
	return &StartSend{Session: session, Text: r.Text, Submit: r.Submit, Raw: r.Raw, Wait: WaitTo(r.Wait), Keys: r.Keys, Paste: r.Paste, Screen: r.Screen}
}

// SendRequestFrom decodes a send; the session it names is w's Session.
func SendRequestFrom(w *StartSend) messages.SendRequest {
	return messages.SendRequest{Text: w.GetText(), Submit: w.GetSubmit(), Raw: w.GetRaw(), Wait: WaitFrom(w.GetWait()), Keys: w.GetKeys(), Paste: w.GetPaste(), Screen: w.GetScreen()}
}

// WaitTo encodes a wait policy.
func WaitTo(p messages.WaitPolicy) *WaitPolicy {
	if p == (messages.WaitPolicy{}) {
		return nil
	}
	return &WaitPolicy{TimeoutNs: int64(p.Timeout), SilenceNs: int64(p.Silence), NoSilence: p.NoSilence, Pattern: p.Pattern, Since: p.Since}
}

// WaitFrom decodes a wait policy.
func WaitFrom(w *WaitPolicy) messages.WaitPolicy {
	if w == nil {
		return messages.WaitPolicy{}
	}
	return messages.WaitPolicy{Timeout: time.Duration(w.TimeoutNs), Silence: time.Duration(w.SilenceNs), NoSilence: w.NoSilence, Pattern: w.Pattern, Since: w.Since}
}

// ReplyBody is one of a Reply's bodies (the generated oneof), so code
// outside this package can build a body apart from its Reply.
type ReplyBody = isReply_Body

// RequestBody is one of a Request's bodies (the generated oneof).
type RequestBody = isRequest_Body
