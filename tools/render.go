package tools

import (
	"strings"

	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// Marker ends every text that was cut (19 bytes).
const Marker = "\n[output truncated]"

// finalize bounds any text to limit bytes: the head, cut on a code point
// boundary, plus Marker (unless the head already ends with it).
func finalize(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	h := s[:textcut.Head(s, limit-len(Marker))]
	if strings.HasSuffix(h, Marker) {
		return h
	}
	return h + Marker
}

// tailWithMeta renders body+meta (+Marker if truncated); over the limit it
// keeps the tail of body, all of meta, and Marker.
func tailWithMeta(body, meta string, truncated bool, limit int) string {
	full := body + meta
	if truncated {
		full += Marker
	}
	if len(full) <= limit {
		return full
	}
	room := limit - len(meta) - len(Marker)
	if room < 0 {
		return finalize(full, limit)
	}
	return body[textcut.Tail(body, room):] + meta + Marker
}

// statusLine is "[status: <s>[, <detail>]]".
func statusLine(t messages.TaskSnapshot) string {
	s := "[status: " + string(t.Status)
	if t.Detail != "" {
		s += ", " + t.Detail
	}
	return s + "]"
}

func renderError(err error, limit int) string {
	if s, ok := controlError(err); ok {
		return finalize(s, limit)
	}
	return finalize("Error: "+err.Error(), limit)
}
