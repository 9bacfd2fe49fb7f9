package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ptyactor/ptyactor/messages"
)

// TerminalRead reads a session's retained scrollback.
const TerminalRead = "terminal_read"

// ReadValue is terminal_read's value.
type ReadValue struct {
	SessionID  string `json:"sessionId"`
	Text       string `json:"text"`
	TotalLines int    `json:"totalLines"`
	LineBegin  int    `json:"lineBegin"`
	LineEnd    int    `json:"lineEnd"`
	Truncated  bool   `json:"truncated"`
	// Cursor reads (and every read): the cursor to read on from, lines no
	// longer retained, and whether more follows.
	Cursor      uint64 `json:"cursor"`
	OmittedFrom uint64 `json:"omittedFrom,omitempty"`
	OmittedTo   uint64 `json:"omittedTo,omitempty"`
	More        bool   `json:"more,omitempty"`
	// Handback: see ForegroundSendValue.Handback.
	Handback *HandbackValue `json:"handback,omitempty"`
}

func (t *Toolset) readDef() Definition {
	return Definition{
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
	}
}

// readRequest reads terminal_read's arguments. Only the encoding is
// checked here; the runtime applies the defaults and the range
// (messages.ReadRequest.Resolve).
func readRequest(a args) (req messages.ReadRequest, err error) {
	if req.Offset, err = a.integer("offset"); err != nil {
		return req, err
	}
	if req.Count, err = a.integer("count"); err != nil {
		return req, err
	}
	cur, err := a.integer("cursor")
	switch {
	case err != nil:
		return req, err
	case cur != nil && *cur < 0:
		return req, messages.InvalidArgument("cursor must be an integer >= 0, got %d", *cur)
	case cur != nil:
		c := uint64(*cur)
		req.Cursor = &c
	}
	return req, nil
}

func (t *Toolset) read(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	req, err := readRequest(a)
	if err != nil {
		return Result{}, err
	}
	r, err := t.svc.Session(owner, id).Read(ctx, req)
	if err != nil {
		return Result{}, err
	}
	// A handback's text comes first; the page fits in what it leaves, so
	// a cursor read's cursor stops after the lines shown.
	text := withHandback(r.Handback, false, t.opts.MaxResultBytes, readReserve, func(limit int) string {
		if req.Cursor != nil {
			r = fitCursorRead(r, *req.Cursor, limit)
			return renderCursorRead(r, limit)
		}
		return renderRead(r, limit)
	})
	return Result{
		Text: text,
		Structured: ReadValue{SessionID: string(id), Text: r.Text, TotalLines: r.TotalLines,
			LineBegin: r.LineBegin, LineEnd: r.LineEnd, Truncated: r.Truncated,
			Cursor: r.Cursor, OmittedFrom: r.OmittedFrom, OmittedTo: r.OmittedTo, More: r.More,
			Handback: handbackValue(r.Handback)},
	}, nil
}

// readReserve is the room a read's text keeps beside a handback.
const readReserve = 64

func renderRead(r messages.ReadResult, limit int) string {
	body := r.Text
	if body == "" {
		body = "(no retained output)"
	}
	meta := "\n[lines: " + strconv.Itoa(r.LineBegin) + "-" + strconv.Itoa(r.LineEnd) + " of " + strconv.Itoa(r.TotalLines) + "]"
	return tailWithMeta(body, meta, r.Truncated, limit)
}

// cursorMetaRoom is what renderCursorRead's metadata can take at most.
const cursorMetaRoom = 160

// fitCursorRead keeps a cursor read within the result bound without
// moving its cursor past a line the caller is not shown: it keeps the
// oldest whole lines that fit (a page must never lose its front, as a
// paged read does), and the cursor then stops after them.
func fitCursorRead(r messages.ReadResult, from uint64, limit int) messages.ReadResult {
	room := limit - cursorMetaRoom
	if len(r.Text) <= room {
		return r
	}
	start := max(from, r.OmittedTo)
	cut := -1
	if room > 0 {
		cut = strings.LastIndexByte(r.Text[:room], '\n')
	}
	if cut < 0 {
		// Not one whole line fits: show nothing, and move nowhere.
		r.Text, r.Cursor, r.More = "", start, true
		return r
	}
	r.Text = r.Text[:cut+1]
	r.Cursor = start + uint64(strings.Count(r.Text, "\n"))
	r.More = true
	return r
}

func renderCursorRead(r messages.ReadResult, limit int) string {
	var b strings.Builder
	b.WriteString(r.Text)
	if r.Text == "" {
		b.WriteString("(no new output)")
	}
	if r.OmittedTo > r.OmittedFrom {
		fmt.Fprintf(&b, "\n[lines %d-%d are no longer retained]", r.OmittedFrom, r.OmittedTo)
	}
	fmt.Fprintf(&b, "\n[cursor: %d]", r.Cursor)
	if r.More {
		fmt.Fprintf(&b, "\n[more output: read again with cursor %d]", r.Cursor)
	}
	return finalize(b.String(), limit)
}
