package tools

import (
	"context"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalUnshare revokes a session's share links; it exists with
// Options.Sharing.
const TerminalUnshare = "terminal_unshare"

// UnshareValue is terminal_unshare's value: how many links were revoked.
type UnshareValue struct {
	SessionID string `json:"sessionId"`
	Revoked   int    `json:"revoked"`
}

func (t *Toolset) unshareDef() Definition {
	return Definition{
		Name:        TerminalUnshare,
		Description: "Revoke every share link of this terminal session at once.",
		InputSchema: mustJSON(object(schema{"sessionId": boundedStr("sessionId", sessionIDDesc)}, "sessionId")),
		OutputSchema: mustJSON(schema{"type": "object", "properties": schema{
			"sessionId": schema{"type": "string"}, "revoked": schema{"type": "integer"},
		}, "required": []string{"sessionId", "revoked"}}),
	}
}

// unshare is terminal_unshare: every link of the caller's session revoked.
func (t *Toolset) unshare(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	if _, err := t.svc.Session(owner, id).Describe(ctx); err != nil {
		return Result{}, err
	}
	n := t.opts.Sharing.Links.Unshare(id)
	return Result{Text: fmt.Sprintf("revoked %d share links of %s", n, id), Structured: UnshareValue{SessionID: string(id), Revoked: n}}, nil
}
