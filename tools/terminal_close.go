package tools

import (
	"context"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalClose closes a session and its whole process tree.
const TerminalClose = "terminal_close"

// CloseValue is terminal_close's value: the outcome and the leak report.
type CloseValue struct {
	SessionID string `json:"sessionId"`
	Outcome   string `json:"outcome"` // "closed" or "already-closing"
	Killed    []int  `json:"killed"`
	Survivors []int  `json:"survivors"`
	// Recording is the session's record, where one was written.
	Recording *RecordingValue `json:"recording,omitempty"`
}

// RecordingValue names a closed record and the end of its hash chain,
// which anchors it outside the file (ptyrec verify -expect SHA256).
type RecordingValue struct {
	Path    string `json:"path"`
	Host    string `json:"host"`
	Records uint64 `json:"records"`
	SHA256  string `json:"sha256"`
	// HostPath is the record's path on its host when it was fetched
	// (Options.FetchRecording): Path is then the local copy, or, when
	// the fetch failed, the host's path again, and FetchError says why.
	HostPath   string `json:"hostPath,omitempty"`
	FetchError string `json:"fetchError,omitempty"`
}

func (t *Toolset) closeDef() Definition {
	return Definition{
		Name:        TerminalClose,
		Description: "Close a terminal session: its whole process tree is terminated, and the call returns once it is gone, saying where the session's recording is (tell the user when they ask for it). Refused (CONTROL_HELD) while a person holds the terminal.",
		InputSchema: mustJSON(object(schema{"sessionId": boundedStr("sessionId", sessionIDDesc)}, "sessionId")),
		OutputSchema: mustJSON(schema{
			"type": "object",
			"properties": schema{
				"sessionId": schema{"type": "string"},
				"outcome":   schema{"type": "string", "enum": []string{"closed", "already-closing"}},
				"killed":    schema{"type": "array", "items": schema{"type": "integer"}},
				"survivors": schema{"type": "array", "items": schema{"type": "integer"}},
				"recording": schema{"type": "object", "description": "the session's record: the file, the machine it is on, and the end of its hash chain (ptyrec verify -expect sha256). A record on a session host is fetched here when the server records: path is then the local copy, hostPath the file on the host; fetchError says why a fetch failed (path is then the host's)", "properties": schema{
					"path": schema{"type": "string"}, "host": schema{"type": "string"}, "records": schema{"type": "integer"}, "sha256": schema{"type": "string"},
					"hostPath": schema{"type": "string"}, "fetchError": schema{"type": "string"},
				}},
			},
			"required": []string{"sessionId", "outcome"},
		}),
	}
}

func (t *Toolset) close(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	report, err := t.svc.Session(owner, id).Close(ctx, "model request")
	if err != nil {
		return Result{}, err
	}
	t.tasksMu.Lock()
	delete(t.tasks, id)
	t.tasksMu.Unlock()
	if t.opts.Sharing != nil {
		t.opts.Sharing.Links.Unshare(id) // a closed session's links die with it
	}
	v := CloseValue{SessionID: string(id), Outcome: "closed", Killed: nonNil(report.Killed), Survivors: nonNil(report.Survivors)}
	if report.Joined {
		v.Outcome = "already-closing"
	}
	if r := report.Recording; r != nil {
		v.Recording = &RecordingValue{Path: r.Path, Host: r.Host, Records: r.Records, SHA256: r.SHA256}
		if f := t.opts.FetchRecording; f != nil && !report.Joined {
			v.Recording.HostPath = r.Path
			if path, err := f(ctx, id, *r); err != nil {
				v.Recording.FetchError = err.Error()
			} else {
				v.Recording.Path = path
			}
		}
	}
	return Result{Text: renderClose(id, !report.Joined, v.Recording, t.opts.MaxResultBytes), Structured: v}, nil
}

func nonNil(p []int) []int {
	if p == nil {
		return []int{}
	}
	return p
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
