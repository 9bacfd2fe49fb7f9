package tools

import (
	"encoding/json"
	"fmt"

	"github.com/ptyactor/ptyactor/messages"
)

// Definition is one tool as a model sees it.
type Definition struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage // a JSON Schema object
	OutputSchema json.RawMessage // the schema of Result.Structured
}

// Tool names.
const (
	TerminalOpen   = "terminal_open"
	TerminalSend   = "terminal_send"
	TerminalWait   = "terminal_wait"
	TerminalScreen = "terminal_screen"
	TerminalResize = "terminal_resize"
	TerminalMark   = "terminal_mark"
	// TerminalShare and TerminalUnshare exist with Options.Sharing.
	TerminalShare   = "terminal_share"
	TerminalUnshare = "terminal_unshare"
	TerminalRead    = "terminal_read"
	TerminalSignal  = "terminal_signal"
	TerminalClose   = "terminal_close"
	TerminalList    = "terminal_list"
	TaskOutput      = "task_output"
	TaskKill        = "task_kill"
)

type schema = map[string]any

func object(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func strProp(desc string) schema { return schema{"type": "string", "description": desc} }

// boundedStr is a string parameter with its bound (in characters, as
// JSON Schema's maxLength counts), from the table the argument checks use.
func boundedStr(name, desc string) schema {
	s := strProp(desc)
	if n, ok := maxChars[name]; ok {
		s["maxLength"] = n
	}
	return s
}
func boolProp(desc string, def bool) schema {
	return schema{"type": "boolean", "description": desc, "default": def}
}
func intProp(desc string, min, def int) schema {
	return schema{"type": "integer", "description": desc, "minimum": min, "default": def}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // static schemas: a failure is a programming error
	}
	return b
}

const sessionIDDesc = "Session id returned by terminal_open."

// controlDesc tells the model about a person's hold on a terminal.
const controlDesc = " A person may take control of the terminal from the console: until they hand it back, sends (and resize, signal, close) fail with CONTROL_HELD, a send in flight returns with cause taken_over, and terminal_wait, terminal_read and terminal_screen still work; the first result after the hand-back carries handback (who, when, the lines they typed, exit codes)."

func statusSchema() schema {
	return schema{
		"type": "object",
		"properties": schema{
			"kind":     schema{"type": "string", "enum": []string{"running", "exited"}},
			"exitCode": schema{"type": "integer"},
			"signal":   schema{"type": "string"},
		},
		"required": []string{"kind"},
	}
}

func sessionProps() schema {
	return schema{
		"sessionId": schema{"type": "string"},
		"name":      schema{"type": "string"},
		"type":      schema{"type": "string"},
		"pid":       schema{"type": "integer"},
		"status":    statusSchema(),
	}
}

func taskSchema() schema {
	statuses := []string{string(messages.TaskRunning), string(messages.TaskStopping), string(messages.TaskCompleted), string(messages.TaskKilled), string(messages.TaskFailed)}
	return schema{
		"type": "object",
		"properties": schema{
			"id":            schema{"type": "string"},
			"kind":          schema{"type": "string"},
			"label":         schema{"type": "string"},
			"sessionId":     schema{"type": "string"},
			"status":        schema{"type": "string", "enum": statuses},
			"detail":        schema{"type": "string"},
			"waitReason":    schema{"type": "string"},
			"exitCode":      schema{"type": "integer"},
			"reader":        schema{"type": "string"},
			"sessionStatus": statusSchema(),
			"startedAt":     schema{"type": "string"},
			"finishedAt":    schema{"type": "string"},
		},
		"required": []string{"id", "kind", "label", "sessionId", "status", "startedAt"},
	}
}

func (t *Toolset) definitions() []Definition {
	bg := !t.opts.DisableRunInBackground
	sendDesc := "Send text to a persistent terminal. By default Enter is submitted and the call waits for a prompt, stdin wait, output silence, timeout, or session exit." + controlDesc
	maxWaitMs := int(t.opts.MaxWaitTimeout.Milliseconds())
	sendProps := schema{
		"sessionId": boundedStr("sessionId", sessionIDDesc),
		"text": schema{"type": "string", "maxLength": t.opts.MaxTextBytes,
			"description": fmt.Sprintf("UTF-8 text, typed as a person types: several lines go one at a time, each once the program reading the terminal took the previous one (so later lines can answer a program the first line starts). Control characters are written as given. May be empty: with submit it presses Enter only. At most %d bytes.", t.opts.MaxTextBytes)},
		"submit": boolProp("Press Enter after the text.", true),
		"raw":    boolProp("Write all of the text at once instead of line by line.", false),
		"keys": schema{"type": "array", "items": schema{"type": "string", "maxLength": messages.MaxKeyChars}, "maxItems": messages.MaxKeys,
			"description": "Named keys pressed after the text, e.g. [\"Escape\"], [\"Down\",\"Down\",\"Enter\"], [\"Ctrl-C\"]: Enter, Tab, Escape, Backspace, Delete, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, Ctrl-<letter>, Alt-<key>. Use with submit:false for full-screen programs."},
		"screen": boolProp("Return the terminal's screen too (automatic while a full-screen program is on the alternate screen; ask for it with programs such as top that draw on the main screen).", false),
		"paste":  boolProp("Paste the text at once, within bracketed-paste markers when the program turned them on (as a terminal pastes), instead of typing it.", false),
		"timeoutMs": schema{"type": "integer", "minimum": 1, "maximum": maxWaitMs,
			"description": "How long this send may wait at most, in milliseconds (default: the server's send timeout)."},
		"silenceMs": schema{"type": "integer", "minimum": 1, "maximum": maxWaitMs,
			"description": "Return after this much output silence (inferred_idle) instead of the server's default."},
		"until": schema{"type": "string", "enum": []string{"ready", "prompt"}, "default": "ready",
			"description": "ready: return at the first of prompt, input wait, silence, exit, timeout. prompt: ignore silence; return at the shell's prompt, a program's input wait, exit or timeout."},
	}
	if bg {
		sendDesc += " Background mode returns a task id for task_output/task_kill."
		sendProps["runInBackground"] = boolProp("Return a task id at once instead of waiting; collect output with task_output, interrupt with task_kill.", false)
	}
	causes := []string{string(messages.CausePrompt), string(messages.CauseInput), string(messages.CausePattern), string(messages.CauseSilence), string(messages.CauseDeadline),
		string(messages.CauseCancelled), string(messages.CauseClosed), string(messages.CauseExit), string(messages.CauseFailed), string(messages.CauseTakenOver)}
	waitReasons := []string{string(messages.WaitStdinRead), string(messages.WaitInferredIdle), string(messages.WaitTimeout), string(messages.WaitSessionExit)}
	sendOut := schema{
		"type": "object",
		"properties": schema{
			"kind":           schema{"type": "string", "enum": []string{"foreground", "background"}},
			"sessionId":      schema{"type": "string"},
			"viewport":       schema{"type": "string"},
			"waitReason":     schema{"type": "string", "enum": waitReasons},
			"cause":          schema{"type": "string", "enum": causes, "description": "which condition ended the send; taken_over: a person took control of the terminal from the console (the command may still run; waitReason says what was true then)"},
			"sessionStatus":  statusSchema(),
			"truncated":      schema{"type": "boolean"},
			"exitCode":       schema{"type": "integer"},
			"reader":         schema{"type": "string"},
			"elapsedMs":      schema{"type": "integer"},
			"unwritten":      schema{"type": "integer", "description": "lines of the text never written (the send ended before their turn)"},
			"firstUnwritten": schema{"type": "string"},
			"screen":         screenSchema(),
			"secret":         schema{"type": "boolean", "description": "the program waits for a password or passphrase (echo off): ask the user to type it"},
			"secretUrl":      schema{"type": "string", "description": "with secret: a link for the user to type the secret straight into the terminal (it needs their console login); give it to them, never type the secret yourself, then call terminal_wait"},
			"secretEntered":  schema{"type": "boolean", "description": "a person entered a secret at a prompt since your previous result (the secret itself is in no result)"},
			"foreignInput":   schema{"type": "string", "description": "input nobody sent (a terminal's answers to queries in a file that was printed, bytes a program pushed) that waited at the shell's prompt and was discarded so the command ran as sent; quoted"},
			"cursor":         schema{"type": "integer", "description": "count of final output lines when the send settled: terminal_read with this cursor returns only what came after"},
			"seq":            schema{"type": "integer", "description": "the number of the send's settle event in the session's record"},
			"running": schema{"type": "array", "description": "processes the command left running (background jobs, nohup, disown)", "items": schema{
				"type": "object", "properties": schema{"pid": schema{"type": "integer"}, "command": schema{"type": "string"}, "detached": schema{"type": "boolean"}},
			}},
			"omittedFrom": schema{"type": "integer"},
			"omittedTo":   schema{"type": "integer", "description": "final lines [omittedFrom, omittedTo) the truncated viewport leaves out; read them with terminal_read cursor=omittedFrom"},
			"taskId":      schema{"type": "string"},
			"handback":    handbackSchema(),
		},
		"required": []string{"kind", "sessionId"},
	}
	openOut := schema{"type": "object", "properties": sessionProps(), "required": []string{"sessionId", "type", "status", "motd"}}
	openOut["properties"].(schema)["motd"] = schema{"type": "string"}
	signals := make([]string, len(messages.Signals))
	for i, s := range messages.Signals {
		signals[i] = string(s)
	}
	defs := []Definition{
		{
			Name:        TerminalOpen,
			Description: "Open a persistent terminal session (bash in a real PTY) whose state (cwd, variables, running programs, REPLs) survives across calls. Returns the session id and the startup output.",
			InputSchema: mustJSON(object(schema{
				"type": boundedStr("type", "Backend type (e.g. \"shell\"); may be omitted when exactly one backend is registered."),
				"name": boundedStr("name", fmt.Sprintf("Optional display name, unique among your sessions: at most %d characters, no control or format characters (no newlines, tabs, escapes).", messages.MaxLabelChars)),
				"cwd":  boundedStr("cwd", "Optional working directory; defaults to the workspace root."),
			})),
			OutputSchema: mustJSON(openOut),
		},
		{
			Name:         TerminalSend,
			Description:  sendDesc,
			InputSchema:  mustJSON(object(sendProps, "sessionId", "text")),
			OutputSchema: mustJSON(sendOut),
		},
		{
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
			OutputSchema: mustJSON(sendOut),
		},
		{
			Name:        TerminalScreen,
			Description: "Show what the terminal displays now, as a person sees it: the rows, the cursor, and whether a full-screen program (vim, less, top, a picker) is on the alternate screen. Use it with full-screen programs; terminal_send results include the screen while one runs.",
			InputSchema: mustJSON(object(schema{"sessionId": boundedStr("sessionId", sessionIDDesc)}, "sessionId")),
			OutputSchema: mustJSON(schema{"type": "object", "properties": schema{
				"sessionId": schema{"type": "string"}, "screen": screenSchema(),
			}, "required": []string{"sessionId", "screen"}}),
		},
		{
			Name:        TerminalResize,
			Description: "Set the terminal's size; the foreground program gets SIGWINCH and redraws. Refused (CONTROL_HELD) while a person holds the terminal.",
			InputSchema: mustJSON(object(schema{
				"sessionId": boundedStr("sessionId", sessionIDDesc),
				"rows":      schema{"type": "integer", "minimum": 1, "maximum": 500},
				"cols":      schema{"type": "integer", "minimum": 2, "maximum": 1000},
			}, "sessionId", "rows", "cols")),
			OutputSchema: mustJSON(schema{"type": "object", "properties": schema{
				"sessionId": schema{"type": "string"}, "screen": screenSchema(),
			}, "required": []string{"sessionId", "screen"}}),
		},
		{
			Name:        TerminalMark,
			Description: "Put a labelled mark in the terminal session's record (\"tests start\", \"deploy\"), so whoever reads the record later finds the step; returns the mark's number in the session's event stream.",
			InputSchema: mustJSON(object(schema{
				"sessionId": boundedStr("sessionId", sessionIDDesc),
				"label":     boundedStr("label", "The mark's label: one line of text."),
			}, "sessionId", "label")),
			OutputSchema: mustJSON(schema{"type": "object", "properties": schema{
				"sessionId": schema{"type": "string"}, "label": schema{"type": "string"}, "seq": schema{"type": "integer"},
			}, "required": []string{"sessionId", "label", "seq"}}),
		},
		{
			Name:        TerminalRead,
			Description: "Read retained scrollback of a terminal session, paged back from the newest line: offset lines are skipped from the end, then up to count lines are returned. Works while a person holds the terminal.",
			InputSchema: mustJSON(object(schema{
				"sessionId": boundedStr("sessionId", sessionIDDesc),
				"offset":    intProp("Lines to skip, counted back from the newest line.", 0, 0),
				"count":     intProp("Lines to return.", 1, messages.DefaultReadCount),
				"cursor": schema{"type": "integer", "minimum": 0,
					"description": "Read forward instead: every line printed after this cursor (the cursor of an earlier result), none twice, then the unfinished line; continue with the cursor this read returns."},
			}, "sessionId")),
			OutputSchema: mustJSON(schema{
				"type": "object",
				"properties": schema{
					"sessionId": schema{"type": "string"}, "text": schema{"type": "string"},
					"totalLines": schema{"type": "integer"}, "lineBegin": schema{"type": "integer"},
					"lineEnd": schema{"type": "integer"}, "truncated": schema{"type": "boolean"},
					"cursor": schema{"type": "integer"}, "omittedFrom": schema{"type": "integer"}, "omittedTo": schema{"type": "integer"},
					"more": schema{"type": "boolean"}, "handback": handbackSchema(),
				},
				"required": []string{"sessionId", "text", "totalLines", "lineBegin", "lineEnd", "truncated"},
			}),
		},
		{
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
		},
		{
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
		},
		{
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
		},
	}
	if t.opts.Sharing != nil {
		defs = append(defs, t.shareDefinitions()...)
	}
	if bg {
		defs = append(defs,
			Definition{
				Name:        TaskOutput,
				Description: "Get the new output of a background terminal send (only what arrived since the previous call) and its status: running, stopping, completed, killed or failed. With wait, first waits until the task finishes or timeoutMs passes.",
				InputSchema: mustJSON(object(schema{
					"taskId":    boundedStr("taskId", "Task id returned by terminal_send with runInBackground."),
					"wait":      boolProp("Wait for the task to finish (up to timeoutMs) before returning.", true),
					"timeoutMs": intProp("How long to wait, in milliseconds (capped).", 0, int(t.opts.WaitTimeout.Milliseconds())),
				}, "taskId")),
				OutputSchema: mustJSON(schema{
					"type": "object",
					"properties": schema{
						"taskId": schema{"type": "string"}, "text": schema{"type": "string"},
						"truncated": schema{"type": "boolean"}, "task": taskSchema(),
					},
					"required": []string{"taskId", "text", "truncated", "task"},
				}),
			},
			Definition{
				Name:        TaskKill,
				Description: "Interrupt a running background terminal send: a real SIGINT goes to the terminal's foreground process group. A finished task is left alone.",
				InputSchema: mustJSON(object(schema{
					"taskId": boundedStr("taskId", "Task id returned by terminal_send with runInBackground."),
					"reason": boundedStr("reason", "Optional reason, for logs."),
				}, "taskId")),
				OutputSchema: mustJSON(schema{
					"type": "object",
					"properties": schema{
						"taskId":  schema{"type": "string"},
						"outcome": schema{"type": "string", "enum": []string{string(messages.TaskCancellationRequested), string(messages.TaskAlreadyFinished)}},
						"task":    taskSchema(),
					},
					"required": []string{"taskId", "outcome", "task"},
				}),
			})
	}
	return defs
}

func screenSchema() schema {
	return schema{
		"type":        "object",
		"description": "the terminal's screen: rows as text, the cursor (0-based), the size, whether a full-screen program is on the alternate screen, and a hash that changes with the screen",
		"properties": schema{
			"rows": schema{"type": "array", "items": schema{"type": "string"}}, "cursorRow": schema{"type": "integer"},
			"cursorCol": schema{"type": "integer"}, "height": schema{"type": "integer"}, "width": schema{"type": "integer"},
			"altScreen": schema{"type": "boolean"}, "hash": schema{"type": "string"},
			"seq": schema{"type": "integer", "description": "the newest output event of the session's record the screen shows"},
		},
	}
}
