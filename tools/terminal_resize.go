package tools

import (
	"context"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalResize sets the terminal's size.
const TerminalResize = "terminal_resize"

func (t *Toolset) resizeDef() Definition {
	return Definition{
		Name:        TerminalResize,
		Description: "Set the terminal's size; the foreground program gets SIGWINCH and redraws. Refused (CONTROL_HELD) while a person holds the terminal.",
		InputSchema: mustJSON(object(schema{
			"sessionId": boundedStr("sessionId", sessionIDDesc),
			"rows":      schema{"type": "integer", "minimum": 1, "maximum": 500},
			"cols":      schema{"type": "integer", "minimum": 2, "maximum": 1000},
		}, "sessionId", "rows", "cols")),
		OutputSchema: mustJSON(screenToolSchema()),
	}
}

// resize is terminal_resize: the new size, then the screen.
func (t *Toolset) resize(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	rows, err := a.integer("rows")
	if err != nil {
		return Result{}, err
	}
	cols, err := a.integer("cols")
	if err != nil {
		return Result{}, err
	}
	if rows == nil || cols == nil {
		return Result{}, messages.InvalidArgument("rows and cols are required")
	}
	if err := t.svc.Session(owner, id).Resize(ctx, *rows, *cols); err != nil {
		return Result{}, err
	}
	return t.screen(ctx, owner, a)
}
