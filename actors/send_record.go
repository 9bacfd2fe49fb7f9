package actors

import (
	"context"
	"strings"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/record"
)

// The send's part of the session's event stream: its start (the lines it
// will type) and its settlement, numbered by the backend after everything
// the stream already holds, so the settle event follows the output the
// result shows.

// recordStart notes the send's start; the startup wait is not a send.
func (a *sendActor) recordStart() {
	r, ok := a.bs.(backend.Recorder)
	if !ok || a.startup {
		return
	}
	ev := record.Event{Kind: record.KindSend, Source: record.SourceAgent, Send: &record.Send{Ticket: a.ticket, Wait: a.isWait(), Keys: a.req.Keys}}
	if !a.isWait() && a.req.Text != "" {
		ev.Send.Lines = strings.Split(strings.ReplaceAll(a.req.Text, "\r\n", "\n"), "\n")
	}
	r.Note(ev)
}

// recordSettle notes the settlement and gives the result its number. It
// returns the wait for the settle to be on record (nil: none is written).
func (a *sendActor) recordSettle() func(context.Context) error {
	r, ok := a.bs.(backend.Recorder)
	if !ok || a.startup {
		return nil
	}
	res := a.out.result
	st := &record.Settle{
		Ticket: a.ticket, Reason: string(res.WaitReason), Cause: string(res.Cause), ExitCode: res.ExitCode,
		Reader: res.Reader, Duration: res.Elapsed, Cursor: int64(res.Cursor),
	}
	for _, l := range a.out.unwritten {
		st.Unwritten = append(st.Unwritten, strings.TrimRight(string(l), "\r\n"))
	}
	a.out.result.Seq = r.Note(record.Event{Kind: record.KindSettle, Settle: st})
	return r.Durable()
}
