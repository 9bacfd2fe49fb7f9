package local

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/ptyactor/ptyactor/teardown"
	"github.com/rs/zerolog"
)

// orphanReaper reaps, while sessions with adoption (Options.Subreaper) are
// open, their members that the host adopted and that exited: a double fork
// such as "(cmd &)" leaves cmd to the nearest subreaper, the host, and
// without this its zombie would wait for the session's close. It watches
// SIGCHLD with one goroutine, running only while it has sessions.
type orphanReaper struct {
	log zerolog.Logger

	mu       sync.Mutex
	sessions map[int]bool // session ids (the shells' pids) whose members are reaped
	stop     chan struct{}
	done     chan struct{}
}

func newOrphanReaper(log zerolog.Logger) *orphanReaper {
	return &orphanReaper{log: log, sessions: map[int]bool{}}
}

// add starts reaping the members of session sid.
func (r *orphanReaper) add(sid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[sid] = true
	if r.stop != nil {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go r.run(sig, r.stop, r.done)
}

// remove stops reaping for session sid (closed: teardown reaped the rest),
// and stops the goroutine with the last session.
func (r *orphanReaper) remove(sid int) {
	r.mu.Lock()
	delete(r.sessions, sid)
	var stop, done chan struct{}
	if len(r.sessions) == 0 {
		stop, done = r.stop, r.done
		r.stop, r.done = nil, nil
	}
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (r *orphanReaper) has(sid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[sid]
}

func (r *orphanReaper) run(sig chan os.Signal, stop, done chan struct{}) {
	defer close(done)
	defer signal.Stop(sig)
	for {
		select {
		case <-stop:
			return
		case <-sig:
			// One signal may stand for several exits (they coalesce);
			// each pass takes every zombie member present.
			pids, err := teardown.ReapMembers(nil, r.has)
			if err != nil {
				r.log.Warn().Err(err).Msg("reap adopted session members")
			}
			if len(pids) > 0 {
				r.log.Debug().Ints("pids", pids).Msg("reaped adopted session members")
			}
		}
	}
}
