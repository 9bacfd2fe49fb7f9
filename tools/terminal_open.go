package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// TerminalOpen opens a persistent terminal session.
const TerminalOpen = "terminal_open"

// OpenValue is terminal_open's value.
type OpenValue struct {
	SessionValue
	Motd string `json:"motd"`
}

func (t *Toolset) openDef() Definition {
	out := schema{"type": "object", "properties": sessionProps(), "required": []string{"sessionId", "type", "status", "motd"}}
	out["properties"].(schema)["motd"] = schema{"type": "string"}
	return Definition{
		Name:        TerminalOpen,
		Description: "Open a persistent terminal session (bash in a real PTY) whose state (cwd, variables, running programs, REPLs) survives across calls. Returns the session id and the startup output.",
		InputSchema: mustJSON(object(schema{
			"type": boundedStr("type", "Backend type (e.g. \"shell\"); may be omitted when exactly one backend is registered."),
			"name": boundedStr("name", fmt.Sprintf("Optional display name, unique among your sessions: at most %d characters, no control or format characters (no newlines, tabs, escapes).", messages.MaxLabelChars)),
			"cwd":  boundedStr("cwd", "Optional working directory; defaults to the workspace root."),
		})),
		OutputSchema: mustJSON(out),
	}
}

func (t *Toolset) open(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	var req messages.SpawnRequest
	var err error
	if a.has("type") {
		if req.Type, err = a.str("type", true); err != nil {
			return Result{}, messages.InvalidArgument("type must be a non-empty string")
		}
	}
	if req.Name, err = a.str("name", false); err != nil {
		return Result{}, err
	}
	if req.Cwd, err = a.str("cwd", false); err != nil {
		return Result{}, err
	}
	req.Host = t.opts.DefaultHost
	if t.opts.DefaultCwd != "" && req.Host == "" {
		switch {
		case req.Cwd == "":
			req.Cwd = t.opts.DefaultCwd
		case !filepath.IsAbs(req.Cwd):
			req.Cwd = filepath.Join(t.opts.DefaultCwd, req.Cwd)
		}
	}
	sp, err := t.svc.Spawn(ctx, owner, req)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:       renderOpen(sp.Info(), t.opts.MaxResultBytes),
		Structured: OpenValue{SessionValue: sessionValue(sp.Info().Snapshot), Motd: sp.Info().Motd},
	}, nil
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
