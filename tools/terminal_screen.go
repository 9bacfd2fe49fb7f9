package tools

import (
	"context"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalScreen shows what the terminal displays now.
const TerminalScreen = "terminal_screen"

// ScreenToolValue is terminal_screen's and terminal_resize's value.
type ScreenToolValue struct {
	SessionID string       `json:"sessionId"`
	Screen    *ScreenValue `json:"screen"`
}

// screenToolSchema is the output schema of terminal_screen and
// terminal_resize.
func screenToolSchema() schema {
	return schema{"type": "object", "properties": schema{
		"sessionId": schema{"type": "string"}, "screen": screenSchema(),
	}, "required": []string{"sessionId", "screen"}}
}

func (t *Toolset) screenDef() Definition {
	return Definition{
		Name:         TerminalScreen,
		Description:  "Show what the terminal displays now, as a person sees it: the rows, the cursor, and whether a full-screen program (vim, less, top, a picker) is on the alternate screen. Use it with full-screen programs; terminal_send results include the screen while one runs.",
		InputSchema:  mustJSON(object(schema{"sessionId": boundedStr("sessionId", sessionIDDesc)}, "sessionId")),
		OutputSchema: mustJSON(screenToolSchema()),
	}
}

// screen is terminal_screen.
func (t *Toolset) screen(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	sc, err := t.svc.Session(owner, id).Screen(ctx)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: renderScreen(&sc, t.opts.MaxResultBytes), Structured: ScreenToolValue{SessionID: string(id), Screen: screenValue(&sc)}}, nil
}
