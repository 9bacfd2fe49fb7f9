package remote

// The link's heartbeat: the ticks and beats that tell a silent host is lost,
// and what a loss fails and writes off, and what the host's return disposes.

import (
	"fmt"
	"time"

	"github.com/ptyactor/ptyactor/actors/remote/internal/endpoint"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// arm schedules the next tick: twice per heartbeat, so a silence is seen
// at most half a beat after it passed lossAfter.
func (l *hostLink) arm() {
	sys, self := l.sys, l.self
	l.timer = time.AfterFunc(l.every/2, func() { sys.Root.Send(self, &linkTick{}) })
}

// beat sends a heartbeat: any answer from the host counts as a sign of
// life (onHeard), and a lost host is asked by it whether it is back.
func (l *hostLink) beat() {
	call := l.host.newCall()
	l.calls[call] = &linkPending{kind: forBeat}
	l.lastBeat = time.Now()
	l.send(&wire.Request{Call: call, Body: &wire.Request_Heartbeat{Heartbeat: &wire.Heartbeat{}}})
}

// onTick checks the silence: past lossAfter (plus the dial's bound
// before the first answer) the host is lost; otherwise a beat is sent
// every heartbeat.
func (l *hostLink) onTick() {
	now := time.Now()
	if l.lost {
		// Is it back? Once a second: each attempt at a dead address
		// holds the library's connection writer for a while.
		if now.Sub(l.lastBeat) >= time.Second {
			l.beat()
		}
		return
	}
	// Before the first answer: the dial's bound on top (a host whose
	// first connection is not made within it is lost then, 3.5 s by
	// default: the library gave up that dial and dropped what waited).
	allow := l.lossAfter
	if !l.everHeard {
		allow += endpoint.DialTimeout
	}
	if silence := now.Sub(l.heard); silence > allow {
		l.lose(fmt.Errorf("%w: %s (%s) silent for %v", messages.ErrHostLost, l.host.name, l.host.addr, silence.Round(time.Millisecond)))
		return
	}
	if now.Sub(l.lastBeat) >= l.every {
		l.beat()
	}
}

// onHeard records a sign of life; a lost host that answers is back:
// it takes new sessions, and what was written off is disposed there.
func (l *hostLink) onHeard() {
	l.heard, l.everHeard = time.Now(), true
	if l.lost {
		l.lost, l.lostErr = false, nil
		l.host.lost.Store(false)
		l.log.Info().Int("written_off", len(l.writtenOff)).Msg("PTY host answers again; it takes new sessions, and what was written off is disposed there")
		tokens := l.writtenOff
		l.writtenOff = nil
		for _, t := range tokens {
			l.dispose(t)
		}
	}
	for _, h := range l.hellos {
		l.sys.Root.Send(h, &linkHelloReply{})
	}
	l.hellos = nil
}

// lose declares the host lost: every call in flight fails, every proxy on
// it is told, and its host-side owners are written off: disposed there as
// soon as the host answers again (or, if it never hears this client
// again, when its grace for a lost client ends).
func (l *hostLink) lose(err error) {
	l.lost, l.lostErr = true, err
	l.host.lost.Store(true)
	l.log.Warn().Err(err).Int("calls", len(l.calls)).Int("sessions", len(l.watchers)).Msg("PTY host lost")
	l.writeOff()
	l.loseAll(err)
}

// writeOff records what this client leaves on the host it is losing: the
// host-side owners it opened (with their sessions) and the disposes not
// yet answered, to dispose when the host is back; and the opens and
// resumes in flight, whose late reply names an owner to clean up.
// Detached owners are not here: they are the host's grace's already.
func (l *hostLink) writeOff() {
	for _, ro := range l.owners {
		if !ro.opening {
			l.writtenOff = append(l.writtenOff, ro.token)
		}
	}
	for call, p := range l.calls {
		switch p.kind {
		case forDispose:
			l.writtenOff = append(l.writtenOff, p.token)
		case forOpen, forResume:
			l.late[call] = p.kind
		}
	}
}

// loseAll fails with err everything that waits on the host: calls in
// flight, proxies, queued calls, hellos; a close waiting on disposes is
// answered, since none will come.
func (l *hostLink) loseAll(err error) {
	calls := l.calls
	l.calls = map[uint64]*linkPending{}
	for call, p := range calls {
		if p.kind == forCaller {
			l.sys.Root.Send(p.replyTo, &linkReply{call: call, err: err})
		}
		if p.kind == forOpen {
			l.failQueued(p.owner, err)
		}
		if p.kind == forResume {
			l.sys.Root.Send(p.replyTo, &linkResumeReply{err: err})
		}
	}
	for _, w := range l.watchers {
		l.sys.Root.Send(w.pid, &linkLost{err: err})
	}
	l.watchers = map[string]watcher{}
	for _, ro := range l.owners {
		l.failQueued(ro, err)
	}
	l.owners = map[messages.Owner]*remoteOwner{}
	for _, h := range l.hellos {
		l.sys.Root.Send(h, &linkHelloReply{err: err})
	}
	l.hellos = nil
	l.disposes = 0
	l.maybeClosed()
}

// failQueued fails with err what waited for ro to open: its calls and
// its resume-token askers.
func (l *hostLink) failQueued(ro *remoteOwner, err error) {
	if ro == nil {
		return
	}
	for _, c := range ro.queued {
		if c.replyTo != nil {
			l.sys.Root.Send(c.replyTo, &linkReply{call: c.req.Call, err: err})
		}
	}
	ro.queued = nil
	for _, to := range ro.tokenTo {
		l.sys.Root.Send(to, &linkTokenReply{err: err})
	}
	ro.tokenTo = nil
}
