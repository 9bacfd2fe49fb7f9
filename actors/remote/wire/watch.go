package wire

import (
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// The watch stream's conversions (WatchStart, WatchBatch): what a person
// watching a session on a host needs of its events, its picture and its
// activity.

// ActivityTo encodes an activity; nil stays nil.
func ActivityTo(a *messages.Activity) *Activity {
	if a == nil {
		return nil
	}
	w := &Activity{
		Badge: string(a.Badge), Reader: a.Reader, Program: a.Program, Cwd: a.Cwd,
		Rows: int64(a.Rows), Cols: int64(a.Cols), Seq: a.Seq,
	}
	if a.ExitCode != nil {
		c := int64(*a.ExitCode)
		w.ExitCode = &c
	}
	if !a.LastOutput.IsZero() {
		w.LastOutputUnixNs = a.LastOutput.UnixNano()
	}
	return w
}

// ActivityFrom decodes an activity; nil stays nil.
func ActivityFrom(w *Activity) *messages.Activity {
	if w == nil {
		return nil
	}
	a := &messages.Activity{
		Badge: messages.Badge(w.Badge), Reader: w.Reader, Program: w.Program, Cwd: w.Cwd,
		Rows: int(w.Rows), Cols: int(w.Cols), Seq: w.Seq,
	}
	if w.ExitCode != nil {
		c := int(*w.ExitCode)
		a.ExitCode = &c
	}
	if w.LastOutputUnixNs != 0 {
		a.LastOutput = time.Unix(0, w.LastOutputUnixNs)
	}
	return a
}

// PictureTo encodes a picture; nil stays nil.
func PictureTo(p *messages.Picture) *Picture {
	if p == nil {
		return nil
	}
	return &Picture{Draw: p.Draw, Rows: int64(p.Rows), Cols: int64(p.Cols), Seq: p.Seq}
}

// PictureFrom decodes a picture; nil stays nil.
func PictureFrom(w *Picture) *messages.Picture {
	if w == nil {
		return nil
	}
	return &messages.Picture{Draw: w.Draw, Rows: int(w.Rows), Cols: int(w.Cols), Seq: w.Seq}
}

// EventTo encodes what a viewer needs of an event: its number, kind and
// time; an output's bytes; a resize's size. Nothing else crosses: input,
// sends and marks are only numbered.
func EventTo(ev record.Event) *Event {
	w := &Event{Seq: ev.Seq, Kind: string(ev.Kind)}
	if !ev.Wall.IsZero() {
		w.WallUnixNs = ev.Wall.UnixNano()
	}
	switch ev.Kind {
	case record.KindOutput:
		w.Data = []byte(ev.Data)
	case record.KindResize:
		w.Rows, w.Cols = int64(ev.Rows), int64(ev.Cols)
	}
	return w
}

// EventFrom decodes an event.
func EventFrom(w *Event) record.Event {
	ev := record.Event{Seq: w.GetSeq(), Kind: record.Kind(w.GetKind()), Data: string(w.GetData()), Rows: int(w.GetRows()), Cols: int(w.GetCols())}
	if ns := w.GetWallUnixNs(); ns != 0 {
		ev.Wall = time.Unix(0, ns)
	}
	return ev
}
