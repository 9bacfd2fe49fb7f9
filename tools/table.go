package tools

import (
	"context"

	"github.com/ptyactor/ptyactor/messages"
)

// tool is one model-facing tool: its name, whether a configuration
// offers it, its definition, and its call. Each lives in the file named
// for it (terminal_send.go holds terminal_send's schema, argument
// reading, call and text); toolTable lists them.
type tool struct {
	name string
	// offered reports whether the options offer the tool; nil: always.
	offered func(o Options) bool
	def     func(t *Toolset) Definition
	call    func(t *Toolset, ctx context.Context, owner messages.Owner, a args) (Result, error)
}

// toolTable holds every tool, in the order Definitions returns them.
// Adding a tool is its file, a row here, and its row in README.md's tool
// table (docs.TestToolTable checks it).
var toolTable = []tool{
	{name: TerminalOpen, def: (*Toolset).openDef, call: (*Toolset).open},
	{name: TerminalSend, def: (*Toolset).sendDef, call: (*Toolset).send},
	{name: TerminalWait, def: (*Toolset).waitDef, call: (*Toolset).wait},
	{name: TerminalScreen, def: (*Toolset).screenDef, call: (*Toolset).screen},
	{name: TerminalResize, def: (*Toolset).resizeDef, call: (*Toolset).resize},
	{name: TerminalMark, def: (*Toolset).markDef, call: (*Toolset).mark},
	{name: TerminalRead, def: (*Toolset).readDef, call: (*Toolset).read},
	{name: TerminalSignal, def: (*Toolset).signalDef, call: (*Toolset).signal},
	{name: TerminalClose, def: (*Toolset).closeDef, call: (*Toolset).close},
	{name: TerminalList, def: (*Toolset).listDef, call: (*Toolset).list},
	{name: TerminalShare, offered: sharing, def: (*Toolset).shareDef, call: (*Toolset).share},
	{name: TerminalUnshare, offered: sharing, def: (*Toolset).unshareDef, call: (*Toolset).unshare},
	{name: TaskOutput, offered: background, def: (*Toolset).taskOutputDef, call: (*Toolset).taskOutput},
	{name: TaskKill, offered: background, def: (*Toolset).taskKillDef, call: (*Toolset).taskKill},
}

// sharing: the share tools exist with Options.Sharing.
func sharing(o Options) bool { return o.Sharing != nil }

// background: the task tools exist unless background sends are disabled.
func background(o Options) bool { return !o.DisableRunInBackground }
