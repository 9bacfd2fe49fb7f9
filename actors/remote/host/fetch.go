package host

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// Records a client may fetch. When the host closes a session it recorded,
// the gateway keeps the record's name under the client the session was
// closed for (its id as heard over its TLS identity, as in client) and the
// client's id of the session; a FetchRecording names that id, and the
// gateway maps it to the file itself. No path a client sends is ever
// opened, and a client asking for any other session (another client's, one
// forgotten, one never recorded) is answered NO_RECORDING alike: the
// answer is no oracle of what else the host recorded.

// The bounds on what is kept: per client the newest keptRecords, each for
// keptRecordsFor after its close. The files stay on the host either way
// (ptyhost's record folder); only the client's way to them ends.
const (
	keptRecords    = 256
	keptRecordsFor = time.Hour
	// fetchPiece bounds the bytes of one FetchRecordingReply (which the
	// gateway then sends as wire.MaxChunk pieces): a 64 MiB record takes
	// 256 round trips, and no reply holds more than this in memory.
	fetchPiece = 256 << 10
	// fetchReadTimeout bounds one piece's read from disk.
	fetchReadTimeout = 30 * time.Second
)

// keptRecord is a closed session's record a client may fetch.
type keptRecord struct {
	rec messages.Recording
	at  time.Time
}

// clientRecords are one client's fetchable records, oldest first.
type clientRecords struct {
	byID  map[string]*keptRecord
	order []string
}

// clientKey names a client as client does: its id as heard over one TLS
// identity.
func clientKey(identity, id string) string { return identity + "/" + id }

// keepRecord makes the record of a session closed for rec's client
// fetchable by that client under the client's id of the session.
func (g *gateway) keepRecord(rec *ownerRec, clientSession string, r messages.Recording) {
	if clientSession == "" || r.Path == "" {
		return
	}
	key := clientKey(rec.identity, rec.client.id)
	cr := g.records[key]
	if cr == nil {
		cr = &clientRecords{byID: map[string]*keptRecord{}}
		g.records[key] = cr
	}
	if _, dup := cr.byID[clientSession]; dup {
		cr.drop(clientSession)
	}
	cr.byID[clientSession] = &keptRecord{rec: r, at: time.Now()}
	cr.order = append(cr.order, clientSession)
	for len(cr.order) > keptRecords {
		cr.drop(cr.order[0])
	}
}

func (cr *clientRecords) drop(id string) {
	delete(cr.byID, id)
	for i, o := range cr.order {
		if o == id {
			cr.order = append(cr.order[:i], cr.order[i+1:]...)
			break
		}
	}
}

// expireRecords forgets the records kept longer than keptRecordsFor.
func (g *gateway) expireRecords(now time.Time) {
	for key, cr := range g.records {
		for len(cr.order) > 0 && now.Sub(cr.byID[cr.order[0]].at) >= keptRecordsFor {
			cr.drop(cr.order[0])
		}
		if len(cr.order) == 0 {
			delete(g.records, key)
		}
	}
}

// fetched is a piece of a record read off the gateway's mailbox.
type fetched struct {
	data []byte
	size int64
	err  error
}

// fetchRecording answers a client's FetchRecording with a piece of the
// record of a session closed for it. The read is done off the mailbox
// (a goroutine, then ReenterAfter), so a slow disk holds no other
// client's request.
func (g *gateway) fetchRecording(ctx actor.Context, call uint64, f *wire.FetchRecording, id, client string, from *actor.PID) {
	var kept *keptRecord
	if cr := g.records[clientKey(id, client)]; cr != nil {
		kept = cr.byID[f.GetClientSession()]
	}
	if kept == nil {
		g.fail(from, call, noRecording(f.GetClientSession()))
		return
	}
	n := f.GetMaxBytes()
	if n == 0 || n > fetchPiece {
		n = fetchPiece
	}
	rec, off := kept.rec, f.GetOffset()
	fut := actor.NewFuture(g.sys, fetchReadTimeout)
	pid, sys := fut.PID(), g.sys
	go func() {
		data, size, err := readRecord(rec.Path, off, int(n))
		sys.Root.Send(pid, &fetched{data: data, size: size, err: err})
	}()
	ctx.ReenterAfter(fut, func(res any, err error) {
		r, _ := res.(*fetched)
		switch {
		case err != nil:
			err = fmt.Errorf("%w: reading the record: %v", messages.ErrTransport, err)
		case r == nil:
			err = fmt.Errorf("%w: reading the record", messages.ErrTransport)
		case errors.Is(r.err, fs.ErrNotExist):
			// Removed from the host's folder since (by hand, or a
			// sweep): as if never kept.
			err = noRecording(f.GetClientSession())
		case r.err != nil:
			err = fmt.Errorf("%w: reading the record: %v", messages.ErrTransport, r.err)
		}
		if err != nil {
			g.fail(from, call, err)
			return
		}
		g.send(from, &wire.Reply{Call: call, Body: &wire.Reply_FetchRecording{FetchRecording: &wire.FetchRecordingReply{
			Data: r.data, Size: uint64(r.size), Recording: wire.RecordingTo(&rec),
		}}})
	})
}

func noRecording(session string) error {
	return messages.Errorf(messages.CodeNoRecording, "PTY host: no recording of session %q for this client", session)
}

// readRecord reads at most n bytes from offset off of the record at path:
// its segments (record.Segments) one after another, as if one file, which
// is how they verify. size is their whole size.
func readRecord(path string, off uint64, n int) (data []byte, size int64, err error) {
	paths, err := record.Segments(path)
	if err != nil {
		return nil, 0, err
	}
	type seg struct {
		path string
		size int64
	}
	segs := make([]seg, len(paths))
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, 0, err
		}
		segs[i] = seg{p, st.Size()}
		size += st.Size()
	}
	if off >= uint64(size) {
		return nil, size, nil
	}
	data = make([]byte, 0, min(int64(n), size-int64(off)))
	pos := int64(off)
	for _, s := range segs {
		if len(data) == cap(data) {
			break
		}
		if pos >= s.size {
			pos -= s.size
			continue
		}
		got, err := readAt(s.path, pos, data[len(data):cap(data)])
		data = data[:len(data)+got]
		if err != nil {
			return nil, 0, err
		}
		pos = 0
	}
	return data, size, nil
}

// readAt fills buf from offset off of the file at path, or up to its end.
func readAt(path string, off int64, buf []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	got, err := f.ReadAt(buf, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return got, err
}
