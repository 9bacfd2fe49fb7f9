package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// ErrRecordingMismatch: a record fetched from a host is not the one its
// close reported (its chain does not verify, or ends elsewhere).
var ErrRecordingMismatch = errors.New("ptyactor: the fetched record is not the one the close reported")

// fetchPiece is what one FetchRecording asks for; the host answers at most
// its own bound (256 KiB) per call.
const fetchPiece = 256 << 10

// FetchRecording copies into w the record of session, a session this
// client closed on the named host, and returns what its close reported
// (Recording: the file's path and machine on the host, its record count
// and last chain hash). A host keeps a client's way to the records of the
// sessions it closed for that client (the same client: this Client, over
// the same TLS identity) for an hour, the newest 256 of them; any other
// session, another client's included, is refused with an error matching
// messages.ErrNoRecording. The record travels in pieces of 256 KiB, its
// segments (a capped record's files) one after another, which is how they
// verify: record.VerifyFile of the copy, written to one file, succeeds.
//
// The copy is checked as it arrives: a plain chain must verify, closed,
// and end at the count and hash the close reported; a keyed one (the
// client has no key) must end with the end record of that count and hash.
// Otherwise the error matches ErrRecordingMismatch, and what was written
// to w is not the record. Cancelling ctx stops the copy between pieces.
//
// host may be messages.AnyHost: each registered host is asked in turn
// until one has the record (a client that placed its sessions on any
// host need not remember where; only the host that closed the session
// for this client answers).
func (c *Client) FetchRecording(ctx context.Context, host string, session messages.SessionID, w io.Writer) (messages.Recording, error) {
	if host != messages.AnyHost {
		e, err := c.hosts.named(host)
		if err != nil {
			return messages.Recording{}, err
		}
		rec, _, err := c.fetchFrom(ctx, e, session, w)
		return rec, err
	}
	var errs []error
	for _, e := range c.hosts.entries() {
		rec, n, err := c.fetchFrom(ctx, e, session, w)
		if err == nil || n > 0 {
			// Found here (a failure after the first bytes is this
			// record's: no other host has it).
			return rec, err
		}
		if !errors.Is(err, messages.ErrNoRecording) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return messages.Recording{}, messages.Errorf(messages.CodeNoRecording, "ptyactor: no PTY host has a recording of %s for this client", session)
	}
	return messages.Recording{}, errors.Join(errs...)
}

// fetchFrom is FetchRecording from host e; n is what was written to w.
func (c *Client) fetchFrom(ctx context.Context, e *hostEntry, session messages.SessionID, w io.Writer) (rec messages.Recording, n int64, err error) {
	host := e.name
	v := newFetchCheck()
	defer v.stop()
	out := io.MultiWriter(w, v)
	var (
		want *messages.Recording
		off  uint64
	)
	for {
		rep, err := c.fetchPiece(ctx, e, session, off)
		if err != nil {
			return messages.Recording{}, n, fmt.Errorf("ptyactor: fetch the record of %s from PTY host %q: %w", session, host, err)
		}
		got := wire.RecordingFrom(rep.GetRecording())
		switch {
		case got == nil:
			return messages.Recording{}, n, fmt.Errorf("%w: a record piece without its recording", messages.ErrTransport)
		case want == nil:
			want = got
		case *got != *want:
			return messages.Recording{}, n, fmt.Errorf("%w: the host's recording changed during the fetch", messages.ErrTransport)
		}
		data, size := rep.GetData(), rep.GetSize()
		if off+uint64(len(data)) > size || len(data) == 0 && off < size {
			return messages.Recording{}, n, fmt.Errorf("%w: a record piece of %d bytes at %d of %d", messages.ErrTransport, len(data), off, size)
		}
		m, err := out.Write(data)
		n += int64(m)
		if err != nil {
			return messages.Recording{}, n, fmt.Errorf("ptyactor: write the record of %s: %w", session, err)
		}
		off += uint64(len(data))
		if off == size {
			break
		}
	}
	if err := v.check(*want); err != nil {
		return messages.Recording{}, n, fmt.Errorf("ptyactor: the record of %s from PTY host %q: %w", session, host, err)
	}
	return *want, n, nil
}

// fetchPiece asks the host for the record's bytes from off.
func (c *Client) fetchPiece(ctx context.Context, e *hostEntry, session messages.SessionID, off uint64) (*wire.FetchRecordingReply, error) {
	call := e.newCall()
	req := &wire.Request{Call: call, Body: &wire.Request_FetchRecording{FetchRecording: &wire.FetchRecording{
		ClientSession: string(session), Offset: off, MaxBytes: fetchPiece,
	}}}
	r, err := ask[*linkReply](ctx, c.sys, e.link, &linkFetch{req: req})
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := wire.ErrorFrom(r.rep.Error); err != nil {
		return nil, err
	}
	if r.rep.GetFetchRecording() == nil {
		return nil, fmt.Errorf("%w: malformed record reply", messages.ErrTransport)
	}
	return r.rep.GetFetchRecording(), nil
}

// fetchCheck verifies a record as it is written: the chain (record.Verify,
// on a goroutine fed through a pipe) and, for a keyed chain the client
// cannot verify, the record's last line.
type fetchCheck struct {
	pw   *io.PipeWriter
	done chan struct{}
	rep  record.Report
	err  error
	tail []byte // the record's last bytes: its end record's line
}

// tailBytes holds the end record's line, which is a few hundred bytes.
const tailBytes = 4 << 10

func newFetchCheck() *fetchCheck {
	pr, pw := io.Pipe()
	v := &fetchCheck{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(v.done)
		v.rep, v.err = record.Verify(pr, nil)
		// A keyed chain stops the verifier at its first record: the
		// rest is read and dropped, so the writer never blocks.
		_, _ = io.Copy(io.Discard, pr)
	}()
	return v
}

func (v *fetchCheck) Write(p []byte) (int, error) {
	v.tail = append(v.tail, p[max(0, len(p)-tailBytes):]...)
	if len(v.tail) > tailBytes {
		v.tail = append(v.tail[:0], v.tail[len(v.tail)-tailBytes:]...)
	}
	return v.pw.Write(p)
}

// stop ends the verifier (after check, or on an error) and joins it.
func (v *fetchCheck) stop() {
	_ = v.pw.Close()
	<-v.done
}

// check ends the record and holds it to what its close reported.
func (v *fetchCheck) check(want messages.Recording) error {
	v.stop()
	if errors.Is(v.err, record.ErrKeyRequired) {
		return v.checkTail(want)
	}
	switch {
	case v.err != nil:
		return fmt.Errorf("%w: %w", ErrRecordingMismatch, v.err)
	case !v.rep.Closed || v.rep.Records != want.Records || v.rep.Last != want.SHA256:
		return fmt.Errorf("%w: it ends at record %d, hash %s (closed: %v); the close reported %d, %s",
			ErrRecordingMismatch, v.rep.Records, v.rep.Last, v.rep.Closed, want.Records, want.SHA256)
	}
	return nil
}

// checkTail holds a keyed record's last line to the close's report: the
// end record, counting the records before it, with the reported hash.
// Without the key that is all a client can check; ptyrec verify -key on
// the copy checks the rest.
func (v *fetchCheck) checkTail(want messages.Recording) error {
	t := bytes.TrimSuffix(v.tail, []byte("\n"))
	i := bytes.LastIndexByte(t, '\n')
	if i < 0 || len(v.tail) == len(t) {
		return fmt.Errorf("%w: no whole last record", ErrRecordingMismatch)
	}
	var last struct {
		H string       `json:"h"`
		E record.Event `json:"e"`
	}
	if err := json.Unmarshal(t[i+1:], &last); err != nil {
		return fmt.Errorf("%w: the last record: %v", ErrRecordingMismatch, err)
	}
	if last.E.Kind != record.KindEnd || last.E.Count+1 != want.Records || last.H != want.SHA256 {
		return fmt.Errorf("%w: the last record is %q of %d records, hash %s; the close reported %d, %s",
			ErrRecordingMismatch, last.E.Kind, last.E.Count+1, last.H, want.Records, want.SHA256)
	}
	return nil
}
