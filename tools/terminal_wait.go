package tools

import (
	"context"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalWait waits on a terminal without typing.
const TerminalWait = "terminal_wait"

func (t *Toolset) waitDef() Definition {
	maxWaitMs := int(t.opts.MaxWaitTimeout.Milliseconds())
	return Definition{
		Name:        TerminalWait,
		Description: "Wait on a terminal without typing anything: until the program reading it waits for input, the shell's prompt returns (with the exit code), the shell exits, new output matches pattern, silence (only if silenceMs is given), or timeoutMs. Use it instead of polling a command that is still running. A prompt that returned since the last send counts at once. It works while a person holds the terminal.",
		InputSchema: mustJSON(object(schema{
			"sessionId": boundedStr("sessionId", sessionIDDesc),
			"pattern":   boundedStr("pattern", fmt.Sprintf("Optional regular expression (RE2), at most %d characters (and %d steps with counted repetitions written out); return as soon as new output matches it.", messages.MaxPatternChars, messages.MaxPatternSize)),
			"timeoutMs": schema{"type": "integer", "minimum": 1, "maximum": maxWaitMs, "default": int(t.opts.WaitTimeout.Milliseconds()),
				"description": "How long to wait at most, in milliseconds."},
			"silenceMs": schema{"type": "integer", "minimum": 1, "maximum": maxWaitMs,
				"description": "Also return after this much output silence."},
			"cursor": schema{"type": "integer", "minimum": 0,
				"description": "Show the output from this cursor (an earlier result's) on; default: since the previous result."},
		}, "sessionId")),
		OutputSchema: mustJSON(settledSchema()),
	}
}

// wait is terminal_wait: a send that writes nothing, with no silence
// unless asked, bounded by the task wait timeouts.
func (t *Toolset) wait(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	policy, err := t.policy(a, true)
	if err != nil {
		return Result{}, err
	}
	res, err := t.svc.Session(owner, id).Wait(ctx, policy)
	return t.foreground(ctx, owner, id, res, err)
}
