package tools

import (
	"context"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalMark puts a labelled mark in the session's record.
const TerminalMark = "terminal_mark"

// MarkValue is terminal_mark's value: the mark's number in the session's
// event stream.
type MarkValue struct {
	SessionID string `json:"sessionId"`
	Label     string `json:"label"`
	Seq       uint64 `json:"seq"`
}

func (t *Toolset) markDef() Definition {
	return Definition{
		Name:        TerminalMark,
		Description: "Put a labelled mark in the terminal session's record (\"tests start\", \"deploy\"), so whoever reads the record later finds the step; returns the mark's number in the session's event stream.",
		InputSchema: mustJSON(object(schema{
			"sessionId": boundedStr("sessionId", sessionIDDesc),
			"label":     boundedStr("label", "The mark's label: one line of text."),
		}, "sessionId", "label")),
		OutputSchema: mustJSON(schema{"type": "object", "properties": schema{
			"sessionId": schema{"type": "string"}, "label": schema{"type": "string"}, "seq": schema{"type": "integer"},
		}, "required": []string{"sessionId", "label", "seq"}}),
	}
}

// mark is terminal_mark: a label in the session's record.
func (t *Toolset) mark(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	label, err := a.str("label", true)
	if err != nil {
		return Result{}, err
	}
	seq, err := t.svc.Session(owner, id).Mark(ctx, label)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: fmt.Sprintf("marked %q at event %d of %s", label, seq, id), Structured: MarkValue{SessionID: string(id), Label: label, Seq: seq}}, nil
}
