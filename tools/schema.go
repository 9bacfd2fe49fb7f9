package tools

import (
	"encoding/json"

	"github.com/ptyactor/ptyactor/messages"
)

// Definition is one tool as a model sees it.
type Definition struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage // a JSON Schema object
	OutputSchema json.RawMessage // the schema of Result.Structured
}

// Schema helpers the tools' definitions share; each tool's schema is in
// its file.
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
