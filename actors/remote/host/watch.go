package host

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"google.golang.org/protobuf/proto"
)

// People watching a session from a client: the client mirrors the
// session's recent events, and the host pushes them there. Each stream
// (one per client and session: a WatchStart) is a pusher, a goroutine that
// follows the session as any viewer does (actors.Watch: it pulls, so the
// session's pump never waits for it) and pushes what it read as
// WatchBatch replies on the WatchStart's call. It sends a batch only
// while fewer than watchWindow are unacknowledged: a slow client holds up
// its own pusher only, which then falls behind in the session's window of
// recent events and, once out of it, sends a fresh picture and a gap
// instead of what it missed. The gateway's mailbox only starts, acks and
// stops pushers: it never waits on one.

const (
	// watchWindow bounds the batches in flight to a client per stream.
	watchWindow = 4
	// watchBatchBytes bounds a batch's output (one larger event goes
	// alone).
	watchBatchBytes = 64 << 10
	// watchLease: a stream whose client neither acknowledged nor renewed
	// it for this long ends (the client renews it every 10 s while someone
	// watches there).
	watchLease = 30 * time.Second
	// watchAsk bounds the pusher's asks of the runtime.
	watchAsk = 10 * time.Second
)

// watchKey names a client's stream of one session.
type watchKey struct {
	client  string // identity "/" client id, as the gateway's clients
	session messages.SessionID
}

// pusher is one stream. Its fields after the first block are the
// goroutine's; the gateway touches only the atomics and the channels.
type pusher struct {
	key      watchKey
	owner    messages.Owner
	stream   uint64 // the WatchStart's call
	since    uint64
	svc      *actors.Service
	sys      *actor.ActorSystem
	to, from *actor.PID // the client's link; the gateway as clients see it
	gw       *actor.PID
	cancel   context.CancelFunc

	acked   atomic.Uint64 // the newest batch the client acknowledged
	renewed atomic.Int64  // when the client last acked or renewed (unix ns)
	picture atomic.Bool   // the client asks for a fresh picture
	wake    chan struct{} // a picture is asked for
	acks    chan struct{} // an ack came

	sent uint64 // batches sent
}

// watchDone: a pusher's goroutine ended.
type watchDone struct{ p *pusher }

// onWatch handles the stream's requests: WatchStart starts (or replaces)
// the client's stream of the session, WatchAck acknowledges and renews
// it, WatchStop ends it. Nothing here waits.
func (g *gateway) onWatch(rec *ownerRec, clientKey string, call uint64, from *actor.PID, req *wire.Request) {
	key := watchKey{client: clientKey, session: messages.SessionID(req.Session())}
	p := g.watches[key]
	switch b := req.Body.(type) {
	case *wire.Request_WatchStart:
		if p != nil {
			p.cancel()
			delete(g.watches, key)
		}
		var o messages.Owner
		if rec != nil {
			o = rec.owner
		}
		ctx, cancel := context.WithCancel(context.Background())
		p = &pusher{
			key: key, owner: o, stream: call, since: b.WatchStart.GetSince(), svc: g.svc, sys: g.sys,
			to: from, from: remotePID(g.sys, g.self), gw: g.self, cancel: cancel,
			wake: make(chan struct{}, 1), acks: make(chan struct{}, 1),
		}
		p.renew()
		g.watches[key] = p
		go p.run(ctx)
	case *wire.Request_WatchAck:
		if p == nil || p.stream != b.WatchAck.GetStream() || rec == nil || rec.owner != p.owner {
			return
		}
		p.renew()
		if n := b.WatchAck.GetBatch(); n > p.acked.Load() {
			p.acked.Store(n)
			signal(p.acks)
		}
		if b.WatchAck.GetPicture() {
			p.picture.Store(true)
			signal(p.wake)
		}
	case *wire.Request_WatchStop:
		if p != nil && p.stream == b.WatchStop.GetStream() && rec != nil && rec.owner == p.owner {
			p.cancel()
			delete(g.watches, key)
		}
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (p *pusher) renew() { p.renewed.Store(time.Now().UnixNano()) }

// leaseLeft is how long the stream lives without another ack.
func (p *pusher) leaseLeft() time.Duration {
	return watchLease - time.Since(time.Unix(0, p.renewed.Load()))
}

var (
	errWake  = errors.New("ptyhost: a picture is asked for")
	errLease = errors.New("ptyhost: the watch's lease ended")
)

// run follows the session and pushes it, until the session closes, the
// stream is stopped or replaced, or its lease ends; its last push says
// which.
func (p *pusher) run(ctx context.Context) {
	defer p.sys.Root.Send(p.gw, &watchDone{p: p})
	last := &wire.WatchBatch{Last: true}
	var lastErr error
	defer func() { p.push(last, lastErr) }()
	sh := p.svc.Session(p.owner, p.key.session)
	actx, cancel := context.WithTimeout(ctx, watchAsk)
	w, err := sh.Watch(actx, p.since)
	cancel()
	if err != nil {
		lastErr = err
		return
	}
	for {
		if p.picture.Swap(false) {
			var ok bool
			if w, ok = p.repaint(ctx, sh, w); !ok {
				return
			}
			continue
		}
		f, err := p.next(ctx, w)
		switch {
		case errors.Is(err, io.EOF):
			last.Ended = true
			return
		case errors.Is(err, errWake):
			continue
		case errors.Is(err, errLease):
			if p.leaseLeft() <= 0 {
				return
			}
			continue
		case err != nil:
			return // stopped or replaced
		}
		if f.Picture != nil && !p.events(ctx, nil, f.Picture, f.Gap) {
			return
		}
		if !p.events(ctx, f.Events, nil, false) {
			return
		}
	}
}

// next waits for the watch's next frame, or a request for a picture, or
// the end of the lease.
func (p *pusher) next(ctx context.Context, w *actors.Watch) (actors.Frame, error) {
	nctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		t := time.NewTimer(max(p.leaseLeft(), time.Millisecond))
		defer t.Stop()
		select {
		case <-p.wake:
			cancel(errWake)
		case <-t.C:
			cancel(errLease)
		case <-nctx.Done():
		}
	}()
	return w.Next(nctx)
}

// repaint sends a fresh picture in order: the events the client lacks
// before it, then the picture; the stream goes on after it. The picture
// shows the newest output; if the stream already sent events after that
// (input, a send: nothing drawn), it stands at the stream's place.
func (p *pusher) repaint(ctx context.Context, sh *actors.Session, old *actors.Watch) (*actors.Watch, bool) {
	actx, cancel := context.WithTimeout(ctx, watchAsk)
	defer cancel()
	nw, err := sh.Watch(actx, 0)
	if err != nil {
		return old, ctx.Err() == nil
	}
	f0, err := nw.Next(actx)
	if err != nil || f0.Picture == nil {
		return old, ctx.Err() == nil
	}
	pic := f0.Picture
	if old.Seq() >= pic.Seq {
		pic.Seq = old.Seq()
		return old, p.events(ctx, nil, pic, false)
	}
	var pre []record.Event
	gap := false
	for old.Seq() < pic.Seq && !gap {
		// The events up to the picture are kept already: Next does not
		// wait for them.
		f, err := old.Next(actx)
		if err != nil || f.Picture != nil {
			gap = true
			break
		}
		for _, ev := range f.Events {
			if ev.Seq <= pic.Seq {
				pre = append(pre, ev)
			}
		}
	}
	if gap {
		pre = nil
	}
	return nw, p.events(ctx, pre, pic, gap)
}

// events pushes evs in batches, then pic (after them) on the last; false
// once the stream ended.
func (p *pusher) events(ctx context.Context, evs []record.Event, pic *messages.Picture, gap bool) bool {
	b, size := &wire.WatchBatch{}, 0
	for _, ev := range evs {
		if len(b.Events) > 0 && size+len(ev.Data) > watchBatchBytes {
			if !p.batch(ctx, b) {
				return false
			}
			b, size = &wire.WatchBatch{}, 0
		}
		b.Events = append(b.Events, wire.EventTo(ev))
		size += len(ev.Data)
	}
	if pic != nil {
		b.Picture, b.Gap = wire.PictureTo(pic), gap
	}
	if len(b.Events) == 0 && b.Picture == nil {
		return true
	}
	return p.batch(ctx, b)
}

// batch pushes b once fewer than watchWindow batches are unacknowledged.
func (p *pusher) batch(ctx context.Context, b *wire.WatchBatch) bool {
	for p.sent-p.acked.Load() >= watchWindow {
		t := time.NewTimer(max(p.leaseLeft(), time.Millisecond))
		select {
		case <-p.acks:
		case <-t.C:
			if p.leaseLeft() <= 0 {
				t.Stop()
				return false
			}
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
	p.sent++
	b.Batch = p.sent
	p.push(b, nil)
	return true
}

// push sends one of the stream's replies to the client, in chunks when
// it is large, as the gateway (it never waits: the endpoint queues it).
func (p *pusher) push(b *wire.WatchBatch, err error) {
	b.Session = string(p.key.session)
	rep := &wire.Reply{Call: p.stream, Error: wire.ErrorTo(err), Body: &wire.Reply_WatchBatch{WatchBatch: b}}
	parts, serr := wire.Split(rep.Call, rep)
	if serr != nil {
		parts = []proto.Message{&wire.Reply{Call: rep.Call, Error: wire.ErrorTo(serr), Body: &wire.Reply_WatchBatch{WatchBatch: &wire.WatchBatch{Session: b.Session, Last: true}}}}
	}
	for _, part := range parts {
		p.sys.Root.RequestWithCustomSender(p.to, part, p.from)
	}
}
