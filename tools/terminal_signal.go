package tools

import (
	"context"
	"strconv"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalSignal signals the terminal's foreground process group.
const TerminalSignal = "terminal_signal"

// SignalValue is terminal_signal's value. Reason says why a signal sent
// was not delivered (Delivered false); it is absent otherwise.
type SignalValue struct {
	SessionID  string `json:"sessionId"`
	Signal     string `json:"signal"`
	Delivered  bool   `json:"delivered"`
	TargetPgid int    `json:"targetPgid"`
	Reason     string `json:"reason,omitempty"`
}

func (t *Toolset) signalDef() Definition {
	signals := make([]string, len(messages.Signals))
	for i, s := range messages.Signals {
		signals[i] = string(s)
	}
	return Definition{
		Name:        TerminalSignal,
		Description: "Send a signal to the terminal's current foreground process group (a real signal, delivered even when the program disabled ^C). SIGKILL is refused while the shell itself is in the foreground: close the session instead. A program that is pid 1 of the sandbox's pid namespace (one the shell exec'd) gets only the signals it has a handler for: any other is reported not delivered (delivered false), with the reason. Refused (CONTROL_HELD) while a person holds the terminal.",
		InputSchema: mustJSON(object(schema{
			"sessionId": boundedStr("sessionId", sessionIDDesc),
			"signal":    schema{"type": "string", "enum": signals, "description": "Signal to send."},
		}, "sessionId", "signal")),
		OutputSchema: mustJSON(schema{
			"type": "object",
			"properties": schema{
				"sessionId": schema{"type": "string"}, "signal": schema{"type": "string"},
				"delivered": schema{"type": "boolean"}, "targetPgid": schema{"type": "integer"},
				"reason": schema{"type": "string", "description": "Why the signal was not delivered; present only when delivered is false."},
			},
			"required": []string{"sessionId", "signal", "delivered", "targetPgid"},
		}),
	}
}

func (t *Toolset) signal(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	s, err := a.str("signal", true)
	if err != nil {
		return Result{}, messages.InvalidArgument("signal must be one of %v", messages.Signals)
	}
	// The runtime refuses a name outside the closed set (messages.ParseSignal).
	sig := messages.Signal(s)
	r, err := t.svc.Session(owner, id).Signal(ctx, sig)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:       renderSignal(sig, r, t.opts.MaxResultBytes),
		Structured: SignalValue{SessionID: string(id), Signal: string(sig), Delivered: r.Delivered, TargetPgid: r.TargetPgid, Reason: r.Reason},
	}, nil
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
