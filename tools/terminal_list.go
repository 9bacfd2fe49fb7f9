package tools

import (
	"context"
	"strconv"
	"strings"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalList lists the caller's open sessions.
const TerminalList = "terminal_list"

// ListValue is terminal_list's value.
type ListValue struct {
	Sessions []SessionValue `json:"sessions"`
}

func (t *Toolset) listDef() Definition {
	return Definition{
		Name:        TerminalList,
		Description: "List your open terminal sessions.",
		InputSchema: mustJSON(object(schema{})),
		OutputSchema: mustJSON(schema{
			"type": "object",
			"properties": schema{
				"sessions": schema{"type": "array", "items": schema{"type": "object", "properties": sessionProps(), "required": []string{"sessionId", "type", "status"}}},
			},
			"required": []string{"sessions"},
		}),
	}
}

// list is terminal_list; it takes no arguments.
func (t *Toolset) list(ctx context.Context, owner messages.Owner, _ args) (Result, error) {
	ss, err := t.svc.List(ctx, owner)
	if err != nil {
		return Result{}, err
	}
	v := ListValue{Sessions: make([]SessionValue, len(ss))}
	for i, s := range ss {
		v.Sessions[i] = sessionValue(s)
	}
	return Result{Text: renderList(ss, t.opts.MaxResultBytes), Structured: v}, nil
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
