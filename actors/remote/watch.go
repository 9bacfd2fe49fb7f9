package remote

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// People watching a session on a host. The proxy keeps a mirror of the
// session's recent events (bounded in bytes as the host's own window),
// which the host fills: the first viewer here starts a stream
// (WatchStart), the host pushes the events in batches (WatchBatch, on
// that call), in order, and the proxy acknowledges each (WatchAck); the
// host sends only while a few are unacknowledged, so a slow client holds
// up only its own stream, never the session nor another client's. The
// mirror is a backend.Watchable: viewers (actors.Watch) read it on their
// own goroutines, exactly as a local session's stream, and never wait on
// the host or the proxy's mailbox but for a picture the mirror does not
// hold. The stream ends when nobody watched for watchIdle, when the
// session closes, or when the host is lost; while it is lost, viewers
// keep waiting (their context bounds them) and Activity says lost.

const (
	// mirrorBytes bounds the output a mirror keeps, as the host's window.
	mirrorBytes = 512 << 10
	// watchRenew: how often the proxy renews a stream someone watches
	// (the host ends one not renewed for 30 s).
	watchRenew = 10 * time.Second
	// watchIdle: a stream nobody read for this long is stopped.
	watchIdle = 30 * time.Second
	// pictureWait bounds a viewer's wait for a picture from the host.
	pictureWait = 10 * time.Second
	// activityFresh: how long an activity read from the host is reused,
	// so a console that polls does not ask the host each time.
	activityFresh = time.Second
)

// Messages to the proxy.
type (
	// watchPicture: a viewer needs a picture the mirror lacks.
	watchPicture struct{}
	// watchTick: renew the stream, or stop it if nobody watches.
	watchTick struct{}
)

// mirror is a remote session as its viewers read it.
type mirror struct {
	sys   *actor.ActorSystem
	proxy *actor.PID
	owner messages.Owner
	id    messages.SessionID

	used atomic.Int64 // when a viewer last read it (unix ns)

	mu     sync.Mutex
	ring   []record.Event // the events after base, oldest first
	bytes  int
	base   uint64 // the ring holds every event after base
	newest uint64
	// pic is the newest picture the stream brought; stale once events
	// after it left the ring.
	pic      *messages.Picture
	picStale bool
	// picPending: a picture is on its way (the stream started from one,
	// or one was asked for); picWait is closed when it comes.
	picPending bool
	picWait    chan struct{}
	changed    chan struct{}
	// started: a stream ever filled it.
	started bool
	lost    bool
	ended   bool

	activity   *messages.Activity
	activityAt time.Time
}

var _ backend.Watchable = (*mirror)(nil)

func newMirror(sys *actor.ActorSystem, proxy *actor.PID, owner messages.Owner, id messages.SessionID) *mirror {
	return &mirror{sys: sys, proxy: proxy, owner: owner, id: id}
}

func (m *mirror) touch() { m.used.Store(time.Now().UnixNano()) }

// idle: nobody read the mirror for d, and nobody waits on it.
func (m *mirror) idle(d time.Duration) bool {
	m.mu.Lock()
	waiting := m.changed != nil
	m.mu.Unlock()
	return !waiting && time.Since(time.Unix(0, m.used.Load())) > d
}

// startFrom says where a stream starts for a viewer from since, and
// whether one must start (none runs, or the viewer wants events the
// mirror no longer holds: the stream starts over there, and the viewers
// already further on miss nothing and get nothing twice).
func (m *mirror) startFrom(since uint64, running bool) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case !m.started || m.lost || m.ended:
		if m.lost || m.ended {
			return 0, false
		}
		m.started = true
		m.reset(since)
		m.picPending = since == 0
		return since, true
	case since != 0 && since < m.base:
		m.reset(since)
		return since, true
	case running:
		return 0, false
	default:
		return m.newest, true
	}
}

// reset empties the ring: what follows comes after seq.
func (m *mirror) reset(seq uint64) {
	clear(m.ring)
	m.ring, m.bytes, m.base, m.newest = m.ring[:0], 0, seq, seq
	m.pic, m.picStale = nil, false
}

// apply takes a batch of the stream.
func (m *mirror) apply(b *wire.WatchBatch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || m.lost {
		return
	}
	for _, w := range b.GetEvents() {
		ev := wire.EventFrom(w)
		if ev.Seq <= m.newest {
			continue // held already (a stream started over): never twice
		}
		if ev.Seq != m.newest+1 {
			m.reset(ev.Seq - 1) // a hole (never from one stream): start over
		}
		m.ring = append(m.ring, ev)
		m.bytes += len(ev.Data)
		m.newest = ev.Seq
		for m.bytes > mirrorBytes && len(m.ring) > 1 {
			old := m.ring[0]
			m.bytes -= len(old.Data)
			m.ring[0] = record.Event{}
			m.ring = m.ring[1:]
			m.base = old.Seq
			if m.pic != nil && old.Seq > m.pic.Seq {
				m.picStale = true
			}
		}
	}
	if p := wire.PictureFrom(b.GetPicture()); p != nil {
		if b.GetGap() || p.Seq != m.newest {
			m.reset(p.Seq)
		}
		m.pic, m.picStale, m.picPending = p, false, false
		m.wakePicture()
	}
	m.wake()
}

func (m *mirror) wake() {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}

func (m *mirror) wakePicture() {
	if m.picWait != nil {
		close(m.picWait)
		m.picWait = nil
	}
}

// stopped: the stream ended; a picture asked for will not come on it.
func (m *mirror) stopped() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.picPending = false
	m.wakePicture()
}

// setLost: the host is lost. Viewers keep what they have and wait.
func (m *mirror) setLost() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lost, m.picPending = true, false
	m.wakePicture()
}

// end: the session closed; no event follows.
func (m *mirror) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended, m.picPending = true, false
	m.wake()
	m.wakePicture()
}

func (m *mirror) setActivity(a messages.Activity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.activity, m.activityAt = &a, time.Now()
}

// Note implements backend.Recorder: the stream is the host's; nothing is
// noted here.
func (m *mirror) Note(record.Event) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.newest
}

// Durable implements backend.Recorder: the record is on the host.
func (m *mirror) Durable() func(ctx context.Context) error { return nil }

// Events implements backend.Recorder: the mirrored events after seq.
func (m *mirror) Events(seq uint64) ([]record.Event, bool) {
	m.touch()
	m.mu.Lock()
	defer m.mu.Unlock()
	lost := seq < m.base
	i := 0
	if seq > m.base {
		i = int(seq - m.base)
	}
	if i >= len(m.ring) {
		return nil, lost
	}
	return append([]record.Event(nil), m.ring[i:]...), lost
}

// Changed implements backend.Watchable.
func (m *mirror) Changed(seq uint64) <-chan struct{} {
	m.touch()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.newest > seq || m.ended {
		now := make(chan struct{})
		close(now)
		return now
	}
	if m.changed == nil {
		m.changed = make(chan struct{})
	}
	return m.changed
}

// Ended implements backend.Watchable.
// Older implements backend.Watchable: the mirror keeps no record; a
// viewer past its window gets a picture and a gap.
func (m *mirror) Older(uint64) ([]record.Event, bool) { return nil, false }

func (m *mirror) Ended(seq uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended && m.newest <= seq
}

// Picture implements backend.Watchable: the newest picture the stream
// brought, while every event after it is still here; else it asks the
// host for one, in order in the stream, and waits for it (bounded). With
// the host lost, or none coming, it is the newest it has.
func (m *mirror) Picture(int) messages.Picture {
	m.touch()
	m.mu.Lock()
	if m.pic != nil && !m.picStale || m.lost || m.ended {
		defer m.mu.Unlock()
		return m.best()
	}
	ask := !m.picPending
	m.picPending = true
	if m.picWait == nil {
		m.picWait = make(chan struct{})
	}
	wait := m.picWait
	m.mu.Unlock()
	if ask {
		m.sys.Root.Send(m.proxy, &watchPicture{})
	}
	t := time.NewTimer(pictureWait)
	defer t.Stop()
	select {
	case <-wait:
	case <-t.C:
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.best()
}

// best is the newest picture held (an empty one at the newest event if
// none).
func (m *mirror) best() messages.Picture {
	if m.pic != nil {
		return *m.pic
	}
	return messages.Picture{Seq: m.newest}
}

// Activity implements backend.Watchable: lost while the host is; else
// the host's (Describe), reused for activityFresh.
func (m *mirror) Activity() messages.Activity {
	m.mu.Lock()
	if m.lost {
		defer m.mu.Unlock()
		return messages.Activity{Badge: messages.BadgeLost, Seq: m.newest}
	}
	if m.activity != nil && time.Since(m.activityAt) < activityFresh {
		defer m.mu.Unlock()
		return *m.activity
	}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := ask[*protocol.DescribeReply](ctx, m.sys, m.proxy, &protocol.Describe{Owner: m.owner, Session: m.id})
	if err == nil && d.Err == nil && d.Snapshot.Activity != nil {
		return *d.Snapshot.Activity // the proxy kept it (setActivity)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost {
		return messages.Activity{Badge: messages.BadgeLost, Seq: m.newest}
	}
	if m.activity != nil {
		return *m.activity
	}
	return messages.Activity{Badge: messages.BadgeRunning, Seq: m.newest}
}

// The proxy's side of the stream.

// lostActivity is what a console shows of a session whose host is lost:
// the badge, and the size and last output known before.
func (p *remoteSession) lostActivity() messages.Activity {
	a := messages.Activity{Badge: messages.BadgeLost, Rows: p.activity.Rows, Cols: p.activity.Cols, LastOutput: p.activity.LastOutput, Seq: p.activity.Seq}
	if m := p.mirror; m != nil {
		m.mu.Lock()
		a.Seq = max(a.Seq, m.newest)
		m.mu.Unlock()
	}
	return a
}

// onWatch hands a viewer the mirror, starting the stream if it must.
func (p *remoteSession) onWatch(ctx actor.Context, m *protocol.WatchSession) {
	if p.detached {
		ctx.Respond(&protocol.WatchReply{Err: errDetached})
		return
	}
	mr := p.watchMirror()
	mr.touch()
	if p.lostErr == nil && p.hostID != "" {
		if from, start := mr.startFrom(m.Since, p.watchCall != 0); start {
			p.startStream(from)
		}
	}
	ctx.Respond(&protocol.WatchReply{Source: mr})
}

func (p *remoteSession) watchMirror() *mirror {
	if p.mirror == nil {
		p.mirror = newMirror(p.sys, p.self, p.owner, p.id)
		if p.lostErr != nil {
			p.mirror.setLost()
		}
	}
	return p.mirror
}

// startStream (re)starts the host's stream from after since; the host
// replaces a stream it runs for this client.
func (p *remoteSession) startStream(since uint64) {
	p.watchCall = p.call(&wire.Request{Body: &wire.Request_WatchStart{WatchStart: &wire.WatchStart{Session: p.hostID, Since: since}}}, true, false)
	if p.watchTimer == nil {
		sys, self := p.sys, p.self
		p.watchTimer = time.AfterFunc(watchRenew, func() { sys.Root.Send(self, &watchTick{}) })
	}
}

// onPicture: a viewer needs a fresh picture. The stream brings it in
// order; a stopped stream starts again where the mirror is.
func (p *remoteSession) onPicture() {
	mr := p.watchMirror()
	if p.lostErr != nil || p.detached || p.hostID == "" || p.phase == phaseClosed {
		mr.stopped()
		return
	}
	if p.watchCall == 0 {
		from, _ := mr.startFrom(0, false)
		p.startStream(from)
		if from == 0 {
			return // the stream starts with a picture
		}
	}
	p.tell(&wire.Request{Body: &wire.Request_WatchAck{WatchAck: &wire.WatchAck{Session: p.hostID, Stream: p.watchCall, Picture: true}}})
}

// onWatchTick renews the stream while someone watches, else stops it.
func (p *remoteSession) onWatchTick() {
	p.watchTimer = nil
	if p.watchCall == 0 || p.lostErr != nil || p.ended {
		return
	}
	if p.mirror.idle(watchIdle) {
		p.stopStream()
		return
	}
	p.tell(&wire.Request{Body: &wire.Request_WatchAck{WatchAck: &wire.WatchAck{Session: p.hostID, Stream: p.watchCall}}})
	sys, self := p.sys, p.self
	p.watchTimer = time.AfterFunc(watchRenew, func() { sys.Root.Send(self, &watchTick{}) })
}

func (p *remoteSession) stopStream() {
	if p.watchCall == 0 {
		return
	}
	if p.lostErr == nil && !p.detached {
		p.tell(&wire.Request{Body: &wire.Request_WatchStop{WatchStop: &wire.WatchStop{Session: p.hostID, Stream: p.watchCall}}})
	}
	p.watchCall = 0
	p.mirror.stopped()
}

// onWatchBatch takes a push of the running stream and acknowledges it.
func (p *remoteSession) onWatchBatch(rep *wire.Reply) {
	b := rep.GetWatchBatch()
	if err := p.hostErr(rep.Error); err != nil || b == nil {
		p.log.Debug().Err(err).Msg("watch stream ended by the host")
		p.watchCall = 0
		p.mirror.stopped()
		return
	}
	if n := b.GetBatch(); n != 0 {
		p.mirror.apply(b)
		p.tell(&wire.Request{Body: &wire.Request_WatchAck{WatchAck: &wire.WatchAck{Session: p.hostID, Stream: p.watchCall, Batch: n}}})
	}
	if b.GetLast() {
		p.watchCall = 0
		if b.GetEnded() {
			p.mirror.end()
		}
		p.mirror.stopped()
	}
}

// endWatch: the proxy ends; its viewers see the session's end.
func (p *remoteSession) endWatch() {
	p.stopStream()
	if p.watchTimer != nil {
		p.watchTimer.Stop()
		p.watchTimer = nil
	}
	if p.mirror != nil {
		p.mirror.end()
	}
}
