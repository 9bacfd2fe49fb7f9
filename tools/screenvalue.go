package tools

import (
	"fmt"
	"strings"

	"github.com/ptyactor/ptyactor/messages"
)

// A terminal's screen as several tools show it: terminal_screen,
// terminal_resize, and terminal_send and terminal_wait while a
// full-screen program runs.

// ScreenValue is a terminal screen.
type ScreenValue struct {
	Rows      []string `json:"rows"`
	CursorRow int      `json:"cursorRow"`
	CursorCol int      `json:"cursorCol"`
	Height    int      `json:"height"`
	Width     int      `json:"width"`
	AltScreen bool     `json:"altScreen"`
	Hash      string   `json:"hash"`
	Seq       uint64   `json:"seq,omitempty"`
}

func screenValue(s *messages.Screen) *ScreenValue {
	if s == nil {
		return nil
	}
	return &ScreenValue{Rows: s.Rows, CursorRow: s.CursorRow, CursorCol: s.CursorCol, Height: s.Height, Width: s.Width, AltScreen: s.AltScreen, Hash: s.Hash, Seq: s.Seq}
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

// renderScreen frames a screen so that it reads as a screen, not a log:
// a ruler line with the size and cursor, the rows (trailing empty rows
// dropped), a closing ruler.
func renderScreen(s *messages.Screen, limit int) string {
	rows := s.Rows
	for len(rows) > 0 && rows[len(rows)-1] == "" && len(rows)-1 > s.CursorRow {
		rows = rows[:len(rows)-1]
	}
	kind := "screen"
	if s.AltScreen {
		kind = "full-screen program"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "┌── %s %dx%d, cursor at row %d col %d ──\n", kind, s.Height, s.Width, s.CursorRow+1, s.CursorCol+1)
	for _, r := range rows {
		b.WriteString("│")
		b.WriteString(r)
		b.WriteString("\n")
	}
	b.WriteString("└──")
	return finalize(b.String(), limit)
}
